import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ServiceUnavailableError, ValidationFailedError } from '../common/errors.js';
import { STATEMENT_TIMEOUT_MS } from '../database/database.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { UnreadableDocumentError } from '../documents/document-input.js';
import type { NewDocument } from '../documents/document-input.js';
import { DocumentsService } from '../documents/documents.service.js';
import { DocumentExtractor } from '../documents/extraction/document-extractor.js';
import { detectContentType } from '../documents/extraction/extract-upload.js';
import { spoolDirectory } from '../documents/spool-directory.js';
import { UploadGate } from '../documents/upload-gate.js';
import { AttachQueue, type ClaimedAttach } from './attach-queue.js';
import { VectorStoresRepository } from './vector-stores.repository.js';

/** Files of one organization indexed at once, across instances (the others wait their turn, `in_progress`). */
export const ATTACHES_PER_ORGANIZATION = 2;
/** A claim's lease, renewed every third of it while the file is indexed: a dead worker's file is due again after it. */
export const ATTACH_LEASE_MS = 15_000;
/**
 * Claims of one file before it is failed: each one that ended without an outcome was a crash or a restart
 * (a lease that ran out); an error while indexing fails the file at once, and a busy extractor gives the
 * claim back without counting it.
 */
export const ATTACH_MAX_ATTEMPTS = 3;
/** How often each instance looks for due files (an attach on this instance wakes it at once). */
const POLL_INTERVAL_MS = 1_000;
/** When the extractor was too busy (or shutting down), the file is due again after this. */
const RETRY_AFTER_BUSY_MS = 5_000;

type Outcome = { kind: 'completed'; document: NewDocument } | { kind: 'failed'; code: string; message: string };

export const interruptedTooOften = (attempts: number) =>
  `Indexing was interrupted ${attempts} times (the service restarted or stopped while reading the file); attach the file again.`;

/** The reason a file failed while it was read or stored (the database's own words stay in the log). */
export function indexingFailed(error: unknown): string {
  if ((error as { code?: string }).code === '57014' || /statement timeout/i.test((error as Error).message))
    return `Indexing took longer than the database allows for one step (${STATEMENT_TIMEOUT_MS / 1000} s): the file may hold too many distinct words or passages to index at once, or the database was busy; attach it again, and split it into smaller files if it fails again.`;
  return 'Indexing failed on an unexpected error (logged); attach the file again, or split it if it fails again.';
}

/**
 * This instance's attach workers: they index the files attached to vector stores, in the order they were
 * attached, at most ATTACH_WORKERS at once on this instance (each holding a place of the uploads' gate, so
 * attaches and uploads share MAX_UPLOADS_IN_FLIGHT) and ATTACHES_PER_ORGANIZATION of one organization at
 * once. A file goes through the upload's extraction workers, limits and refusals, then becomes a document
 * of the collection in the same transaction that marks it `completed`; a refusal marks it `failed` with
 * OpenAI's `last_error`. Claims are leases in the database (AttachQueue): a restart loses nothing.
 */
@Injectable()
export class AttachWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('VectorStoreFiles');
  private readonly inFlight = new Set<Promise<void>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Woken while polling: poll again once done (an attach must not wait a whole interval). */
  private wokenMeanwhile = false;
  private stopped = false;

  constructor(
    private readonly queue: AttachQueue,
    private readonly files: VectorStoresRepository,
    private readonly documents: DocumentsService,
    private readonly extractor: DocumentExtractor,
    private readonly uploads: UploadGate,
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.ATTACH_WORKERS === 0) return;
    this.pollTimer = setInterval(() => this.wake(), POLL_INTERVAL_MS);
    this.pollTimer.unref();
    // Files left `in_progress` by a previous run are due once their lease ends (at once if never claimed).
    this.wake();
  }

  onModuleDestroy(): void {
    // Files being indexed see the extraction pool close and go back to the queue (release), or their
    // lease ends: either way another run picks them up.
    this.stopped = true;
    clearInterval(this.pollTimer);
  }

  /** Looks for due files now (after an attach on this instance). */
  wake(): void {
    if (this.config.ATTACH_WORKERS === 0 || this.stopped) return;
    if (this.polling) {
      this.wokenMeanwhile = true;
      return;
    }
    void this.poll();
  }

  /** Files being indexed on this instance (tests wait for them). */
  idle(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight]);
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      do {
        this.wokenMeanwhile = false;
        while (!this.stopped && this.inFlight.size < this.config.ATTACH_WORKERS) {
          const leave = this.uploads.tryEnter();
          if (!leave) break;
          let job: ClaimedAttach | null;
          try {
            job = await this.queue.claim(ATTACHES_PER_ORGANIZATION, ATTACH_LEASE_MS);
          } catch (error) {
            leave();
            throw error;
          }
          if (!job) {
            leave();
            break;
          }
          const running = this.run(job).finally(() => {
            leave();
            this.inFlight.delete(running);
            this.wake();
          });
          this.inFlight.add(running);
        }
      } while (this.wokenWhilePolling());
    } catch (error) {
      this.logger.warn(`Claiming files to index failed: ${(error as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  /** An attach or a finished file woke the worker during the last round (which may have found nothing). */
  private wokenWhilePolling(): boolean {
    return this.wokenMeanwhile && !this.stopped;
  }

  private async run(job: ClaimedAttach): Promise<void> {
    const heartbeat = setInterval(() => {
      this.queue.renew(job, ATTACH_LEASE_MS).catch(() => undefined);
    }, ATTACH_LEASE_MS / 3);
    heartbeat.unref();
    try {
      if (job.attempts > ATTACH_MAX_ATTEMPTS) {
        await this.queue.recordFailed(job, { code: 'server_error', message: interruptedTooOften(job.attempts - 1) });
        return;
      }
      const outcome = await this.index(job);
      if (outcome.kind === 'failed') {
        const recorded = await this.queue.recordFailed(job, { code: outcome.code, message: outcome.message });
        if (recorded)
          await this.documents.reportUnreadable(
            job.organization_id,
            new UnreadableDocumentError(job.filename, ValidationFailedError.field('file', outcome.message)),
          );
        return;
      }
      await this.store(job, outcome.document);
    } catch (error) {
      if (error instanceof ServiceUnavailableError) {
        // The extractor was starved or is closing: not the file's fault, so it waits its turn again.
        await this.queue.release(job, RETRY_AFTER_BUSY_MS).catch(() => undefined);
        return;
      }
      // Reading or storing the file failed: it would fail the same way again (a restart is what the lease
      // and ATTACH_MAX_ATTEMPTS are for), so it fails now, saying why.
      this.logger.warn(`Indexing file ${job.file_id} failed: ${(error as Error).message}`);
      await this.queue
        .recordFailed(job, { code: 'server_error', message: indexingFailed(error) })
        .catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Stores the document and marks the file `completed` in one transaction, unless the claim was lost. */
  private async store(job: ClaimedAttach, document: NewDocument): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.queue.holdForOutcome(manager, job))) return;
      const [stored] = await this.documents.createWithin(
        manager,
        { organizationId: job.organization_id, collectionId: job.collection_id },
        [document],
      );
      await this.queue.recordCompleted(manager, job, stored.id);
    });
  }

  /** The file read by the upload's extraction workers, under the same limits and refusals. */
  private async index(job: ClaimedAttach): Promise<Outcome> {
    const failed = (code: string, message: string): Outcome => ({ kind: 'failed', code, message });
    const contentType = detectContentType({ originalname: job.filename, mimetype: job.mimetype });
    if (!contentType)
      return failed(
        'unsupported_file',
        `Unsupported file type "${job.filename}". Attach plain text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).`,
      );
    if (job.bytes === 0) return failed('invalid_file', 'The file is empty.');
    if (job.bytes > this.config.MAX_UPLOAD_BYTES)
      return failed('invalid_file', `The file is over MAX_UPLOAD_BYTES (${this.config.MAX_UPLOAD_BYTES} bytes).`);
    const content = await this.files.fileContent(job.file_id);
    if (!content) return failed('file_not_found', 'The file was deleted.');
    // The extraction worker reads a path, as it does an upload's spool file.
    const path = join(spoolDirectory(), `kqs-attach-${randomBytes(12).toString('hex')}`);
    try {
      await writeFile(path, content, { mode: 0o600 });
      const { text, chunks } = await this.extractor.extract(path, contentType);
      return {
        kind: 'completed',
        document: {
          title: job.filename,
          content: text,
          metadata: job.attributes,
          contentType,
          sizeBytes: job.bytes,
          chunks,
        },
      };
    } catch (error) {
      if (error instanceof ValidationFailedError)
        return failed('invalid_file', Object.values(error.fields)[0]?.[0] ?? error.message);
      throw error;
    } finally {
      await rm(path, { force: true });
    }
  }
}
