import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { ServiceUnavailableError, ValidationFailedError } from '../../common/errors.js';
import { WorkerCrashedError, WorkerPool, WorkerPoolClosedError, WorkerTimeoutError } from '../workers/worker-pool.js';
import { workerScript } from '../workers/worker-script.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/env.schema.js';
import type { IndexedChunk } from '../../retrieval/search-index.repository.js';
import { passagesOf } from '../passages.js';
import type { ExtractionReply, ExtractionRequest } from './extract.worker.js';
import type { DocumentContentType } from './extract-upload.js';

/** Texts up to this many characters are chunked in place (a few ms); longer ones in a worker. */
const INLINE_CHUNK_CHARS = 32_768;
/** Extraction yields the CPU to the event loop (see WorkerPoolOptions.niceness). */
const EXTRACTION_NICENESS = 10;
/**
 * What a worker holds beside its heap: the runtime and pdf.js (some 60 MB resident when idle), the
 * young generation (3 × 8 MB), the file and the PDF streams it decodes. Measured on Node 24: documents
 * that are accepted peak at 120-190 MB resident (heap limit 96), while the hostile PDFs of the abuse
 * bench, refused at the heap limit, reached 280-300 MB before V8 stopped them.
 */
const RESIDENT_BEYOND_HEAP_MB = 128;

/** A timed-out extraction that the machine, not the file, made slow (see refusalFor). */
export const EXTRACTION_STARVED_DETAIL =
  'The service is too busy to read the document in time. Retry the upload with exponential back-off.';

export interface ExtractedDocument {
  text: string;
  chunks: IndexedChunk[];
}

/**
 * Reads documents off the event loop: extraction (HTML, PDF, text decoding) and chunking run in a pool
 * of worker processes, each task under a wall-clock limit and each worker under a heap limit, so a
 * hostile file costs its sender a 400 and nobody else anything. Takes bytes and a content type, not an
 * HTTP request, so it does not care which HTTP adapter delivered them.
 */
@Injectable()
export class DocumentExtractor implements OnModuleDestroy {
  private readonly logger = new Logger(DocumentExtractor.name);
  private readonly pool: WorkerPool;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const script = workerScript(import.meta.url, 'extract.worker');
    this.pool = new WorkerPool(script, {
      size: config.EXTRACTION_WORKERS,
      timeoutMs: config.EXTRACTION_TIMEOUT_MS,
      wallTimeoutMs: config.EXTRACTION_WALL_TIMEOUT_MS,
      memoryMb: config.EXTRACTION_MEMORY_MB,
      residentLimitMb: config.EXTRACTION_MEMORY_MB + RESIDENT_BEYOND_HEAP_MB + (script.extraResidentMb ?? 0),
      recycleAboveMb: config.EXTRACTION_MEMORY_MB,
      niceness: EXTRACTION_NICENESS,
    });
  }

  /**
   * The text of an uploaded file (spooled at `path`, see spool-file.ts) and its chunks; a refused file
   * is a 400 naming `file`. The worker reads the file itself.
   */
  extract(path: string, contentType: DocumentContentType): Promise<ExtractedDocument> {
    return this.run({ kind: 'extract', path, contentType }, 'file');
  }

  /** The chunks of a document's text (given as JSON, so field `content`). */
  async chunk(text: string): Promise<IndexedChunk[]> {
    if (text.length <= INLINE_CHUNK_CHARS) return passagesOf(text, false);
    return (await this.run({ kind: 'chunk', text }, 'content')).chunks;
  }

  onModuleDestroy(): void {
    this.pool.close();
  }

  private async run(request: ExtractionRequest, field: string): Promise<ExtractedDocument> {
    let reply: ExtractionReply;
    try {
      reply = await this.pool.run<ExtractionReply>(request);
    } catch (error) {
      throw this.refusalFor(error, field);
    }
    if ('refusal' in reply) throw ValidationFailedError.field(field, reply.refusal);
    if ('failure' in reply) {
      this.logger.warn(`extraction failed: ${reply.failure}`);
      throw ValidationFailedError.field(field, 'The document could not be read.');
    }
    return reply;
  }

  private refusalFor(error: unknown, field: string): Error {
    const seconds = Math.round(this.config.EXTRACTION_TIMEOUT_MS / 1000);
    if (error instanceof WorkerTimeoutError) {
      // Starved: the worker (niced) got too little CPU because the machine is busy with other work. The
      // file is not at fault, so the client may retry it.
      if (error.starved) {
        this.logger.warn('extraction stopped: its worker got too little CPU in time (the machine is busy)');
        return new ServiceUnavailableError(EXTRACTION_STARVED_DETAIL);
      }
      return ValidationFailedError.field(
        field,
        `Reading the document took over ${seconds} s; it is refused. Split it into smaller files.`,
      );
    }
    if (error instanceof WorkerCrashedError && error.outOfMemory) {
      this.logger.warn(
        `extraction refused: the worker reached its memory limit (EXTRACTION_MEMORY_MB=${this.config.EXTRACTION_MEMORY_MB}): ${error.message}`,
      );
      return ValidationFailedError.field(
        field,
        'Reading the document needs more memory than one document may use; it is refused. Split it into smaller files.',
      );
    }
    if (error instanceof WorkerCrashedError) {
      this.logger.warn(`extraction ${error.message}`);
      return ValidationFailedError.field(field, 'The document could not be read.');
    }
    if (error instanceof WorkerPoolClosedError)
      return new ServiceUnavailableError('The service is shutting down; retry the upload.');
    return error as Error;
  }
}
