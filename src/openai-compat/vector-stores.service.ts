import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CollectionsService } from '../collections/collections.service.js';
import {
  AttachesBusyError,
  AttachStorageFullError,
  FilesStorageFullError,
  NotFoundError,
  ValidationFailedError,
} from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { isUuid } from '../common/validation.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { DocumentsService } from '../documents/documents.service.js';
import type { UploadedFile } from '../documents/extraction/extract-upload.js';
import { TITLE_MAX } from '../documents/dto/document.dto.js';
import { SearchService } from '../query/search.service.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import type { RetrievedSource } from '../retrieval/retriever.js';
import { AttachAdmission } from './attach-admission.js';
import { ATTACHES_QUEUED_PER_ORGANIZATION, AttachQueue } from './attach-queue.js';
import { AttachWorker } from './attach-worker.js';
import {
  type FileRow,
  type ForgetDocument,
  type ListWindow,
  type VectorStoreFileRow,
  type VectorStoreRow,
  VectorStoresRepository,
} from './vector-stores.repository.js';

export type Attributes = Record<string, string | number>;

export interface SearchHit {
  source: RetrievedSource;
  fileId: string;
  filename: string;
  attributes: Attributes;
}

/** A list window's rows, and whether more follow. */
export interface Window<T> {
  rows: T[];
  hasMore: boolean;
}

const windowOf = <T>(rows: T[], window: ListWindow): Window<T> => ({
  rows: rows.slice(0, window.limit),
  hasMore: rows.length > window.limit,
});

/**
 * OpenAI's vector stores over collections: a vector store is a collection, a file attached to it is
 * queued, then extracted, chunked and indexed as one of its documents by the attach workers (the same
 * extraction workers, limits and refusals as an upload), and a vector-store search is a search of that
 * collection.
 */
@Injectable()
export class VectorStoresService {
  constructor(
    private readonly repository: VectorStoresRepository,
    private readonly collections: CollectionsService,
    private readonly documents: DocumentsService,
    private readonly searches: SearchService,
    private readonly queue: AttachQueue,
    private readonly worker: AttachWorker,
    private readonly admission: AttachAdmission,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    caller: Principal,
    input: { name?: string | null; description?: string | null; metadata?: Attributes | null; fileIds?: string[] },
  ): Promise<VectorStoreRow> {
    this.checkSize('metadata', input.metadata);
    // Every file is checked first, so an unknown one is a 404 before the store is made.
    const files: FileRow[] = [];
    for (const fileId of input.fileIds ?? []) files.push(await this.file(caller, fileId));
    if (
      files.length > 0 &&
      (await this.queue.queued(caller.organizationId)) + files.length > ATTACHES_QUEUED_PER_ORGANIZATION
    )
      throw new AttachesBusyError(ATTACHES_QUEUED_PER_ORGANIZATION);
    const name = input.name ?? `Vector store ${randomBytes(4).toString('hex')}`;
    const limitMb = this.config.FILES_STORAGE_MB_PER_ORGANIZATION;
    // The store and its attachments in one transaction: an error of any file (storage full) creates nothing.
    const create = () =>
      this.collections.create(caller, { name, description: input.description, metadata: input.metadata }, attachAll);
    const attachAll = async (manager: EntityManager, collection: string) => {
      for (const file of files) {
        const queued = await this.repository.queueAttachmentWithin(
          manager,
          caller.organizationId,
          collection,
          file,
          {},
          limitMb * 1024 * 1024,
          ATTACHES_QUEUED_PER_ORGANIZATION,
          this.forgetDocument(caller),
        );
        if (queued === 'busy') throw new AttachesBusyError(ATTACHES_QUEUED_PER_ORGANIZATION);
        if (queued === 'no file') throw NotFoundError.named('File', file.id);
        if (queued === 'full') throw new AttachStorageFullError(limitMb);
        if (queued === 'gone') throw new Error(`collection ${collection} vanished while being created`);
      }
    };
    const created = files.length > 0 ? await this.admission.run(caller.organizationId, create) : await create();
    if (files.length > 0) this.worker.wake();
    return this.store(caller, created.id);
  }

  async list(caller: Principal, window: ListWindow): Promise<Window<VectorStoreRow>> {
    return windowOf(await this.repository.stores(caller.organizationId, caller.collectionIds ?? null, window), window);
  }

  /** The vector store, or a 404 naming it (unknown, another organization's, out of the key's reach). */
  async store(caller: Principal, id: string): Promise<VectorStoreRow> {
    const collection = await this.reach(caller, id);
    const row = await this.repository.store(caller.organizationId, collection);
    if (!row) throw NotFoundError.named('Vector store', id);
    return row;
  }

  async update(
    caller: Principal,
    id: string,
    changes: { name?: string; description?: string | null; metadata?: Attributes | null },
  ): Promise<VectorStoreRow> {
    this.checkSize('metadata', changes.metadata);
    const collection = await this.reach(caller, id);
    await this.collections.update(caller, collection, changes);
    return this.store(caller, collection);
  }

  async remove(caller: Principal, id: string): Promise<string> {
    const collection = await this.reach(caller, id);
    await this.collections.remove(caller, collection);
    return collection;
  }

  /** Stores the file, within the organization's FILES_STORAGE_MB_PER_ORGANIZATION (a 400 past it). */
  async upload(caller: Principal, file: UploadedFile, purpose: string): Promise<FileRow> {
    const content = await readFile(file.path);
    const limitMb = this.config.FILES_STORAGE_MB_PER_ORGANIZATION;
    const stored = await this.repository.insertFile(
      {
        organization_id: caller.organizationId,
        // PostgreSQL's text holds no NUL character (as the documents' upload strips it from a title).
        filename: ((file.originalname || '').replace(/\u0000/g, '').trim() || 'upload').slice(0, TITLE_MAX),
        mimetype: ((file.mimetype || '').replace(/\u0000/g, '') || 'application/octet-stream').slice(0, 200),
        purpose,
        bytes: content.length,
      },
      content,
      caller.collectionIds ?? null,
      limitMb * 1024 * 1024,
    );
    if (!stored) throw new FilesStorageFullError(limitMb);
    return stored;
  }

  async files(caller: Principal, window: ListWindow, purpose?: string): Promise<Window<FileRow>> {
    return windowOf(
      await this.repository.files(caller.organizationId, caller.collectionIds ?? null, window, purpose),
      window,
    );
  }

  async file(caller: Principal, id: string): Promise<FileRow> {
    const file = isUuid(id)
      ? await this.repository.file(caller.organizationId, caller.collectionIds ?? null, id.toLowerCase())
      : null;
    if (!file) throw NotFoundError.named('File', id);
    return file;
  }

  /** The file with its bytes (`GET /v1/files/{id}/content`); a 404 as `file` gives. */
  async fileWithContent(caller: Principal, id: string): Promise<{ file: FileRow; content: Buffer }> {
    const file = await this.file(caller, id);
    const content = await this.repository.fileContent(file.id);
    if (!content) throw NotFoundError.named('File', id); // deleted meanwhile
    return { file, content };
  }

  /** Deletes the file and, in every vector store it is attached to, the document it became. */
  async deleteFile(caller: Principal, id: string): Promise<string> {
    const file = await this.file(caller, id);
    await this.admission.run(caller.organizationId, () =>
      this.repository.deleteFile(file.id, this.forgetDocument(caller)),
    );
    return file.id;
  }

  /**
   * Attaches a file, as OpenAI does: answered at once, `in_progress`; the attach workers (AttachWorker)
   * then index it (`completed`) or refuse it (`failed`, with OpenAI's `last_error`). Attaching it again
   * replaces the earlier outcome. At most ATTACHES_QUEUED_PER_ORGANIZATION files of the organization may
   * be waiting at once (a 429 beyond). Each attachment counts the file's bytes again against
   * FILES_STORAGE_MB_PER_ORGANIZATION (its indexed copy; a 400 past it), until detached or failed.
   */
  async attach(
    caller: Principal,
    storeId: string,
    fileId: string,
    attributes: Attributes,
  ): Promise<VectorStoreFileRow> {
    this.checkSize('attributes', attributes);
    const collection = await this.reachForWriting(caller, storeId);
    const file = await this.file(caller, fileId);
    // A quick look first, outside any transaction: a burst past the bound is answered 429 at once rather
    // than queuing for the organization's usage row (and the pool) only to be refused there.
    if ((await this.queue.queued(caller.organizationId)) >= ATTACHES_QUEUED_PER_ORGANIZATION)
      throw new AttachesBusyError(ATTACHES_QUEUED_PER_ORGANIZATION);
    const limitMb = this.config.FILES_STORAGE_MB_PER_ORGANIZATION;
    const queued = await this.admission.run(caller.organizationId, () =>
      this.repository.queueAttachment(
        caller.organizationId,
        collection,
        file,
        attributes,
        limitMb * 1024 * 1024,
        ATTACHES_QUEUED_PER_ORGANIZATION,
        this.forgetDocument(caller),
      ),
    );
    if (queued === 'busy') throw new AttachesBusyError(ATTACHES_QUEUED_PER_ORGANIZATION);
    if (queued === 'gone') throw NotFoundError.named('Vector store', storeId);
    if (queued === 'no file') throw NotFoundError.named('File', fileId);
    if (queued === 'full') throw new AttachStorageFullError(limitMb);
    this.worker.wake();
    return queued;
  }

  async attachments(
    caller: Principal,
    storeId: string,
    window: ListWindow,
    status?: string,
  ): Promise<Window<VectorStoreFileRow>> {
    const collection = await this.reach(caller, storeId);
    return windowOf(await this.repository.attachments(collection, window, status), window);
  }

  async attachment(caller: Principal, storeId: string, fileId: string): Promise<VectorStoreFileRow> {
    const collection = await this.reach(caller, storeId);
    const row = isUuid(fileId) ? await this.repository.attachment(collection, fileId.toLowerCase()) : null;
    if (!row) throw NotFoundError.named('File', fileId);
    return row;
  }

  /** Takes the file out of the vector store, with the document it became (the file itself stays). */
  async detach(caller: Principal, storeId: string, fileId: string): Promise<string> {
    const collection = await this.reachForWriting(caller, storeId);
    const row = await this.attachment(caller, collection, fileId);
    // The row first: a file being indexed then stores nothing (see VectorStoresRepository.detach).
    await this.admission.run(caller.organizationId, () =>
      this.repository.detach(collection, row.file_id, this.forgetDocument(caller)),
    );
    return row.file_id;
  }

  async search(
    caller: Principal,
    storeId: string,
    request: {
      query: string;
      filter?: MetadataFilter;
      maxResults: number;
      scoreThreshold?: number | null;
      signal?: AbortSignal;
    },
  ): Promise<SearchHit[]> {
    // The search checks the collection itself (one lookup); its 404 names the vector store here.
    const outcome = await this.searches
      .search(caller, {
        text: request.query,
        collectionIds: [storeId],
        topK: request.maxResults,
        filter: request.filter,
        signal: request.signal,
      })
      .catch((error: unknown) => {
        throw error instanceof NotFoundError ? NotFoundError.named('Vector store', storeId) : error;
      });
    // OpenAI's `ranking_options.score_threshold`: the results scoring less are left out.
    const threshold = request.scoreThreshold ?? null;
    const sources = outcome.sources.filter((source) => threshold === null || source.score >= threshold);
    const files = await this.repository.filesOfDocuments(sources.map((source) => source.documentId));
    return sources.map((source) => {
      const file = files.get(source.documentId);
      return {
        source,
        fileId: file?.file_id ?? source.documentId,
        filename: file?.filename ?? source.title,
        attributes: file?.attributes ?? source.metadata,
      };
    });
  }

  /**
   * DOCUMENT_METADATA_MAX_BYTES, as `/v1/documents/` applies it: attributes become the document's metadata
   * (and a store's metadata its collection's), which a search's filter reads for every candidate.
   */
  private checkSize(field: string, value: Attributes | null | undefined): void {
    const limit = this.config.DOCUMENT_METADATA_MAX_BYTES;
    if (value && Buffer.byteLength(JSON.stringify(value)) > limit)
      throw ValidationFailedError.field(field, `Ensure this object takes no more than ${limit} bytes as JSON.`);
  }

  /** The collection id of a vector store the caller may read, or a 404 naming the vector store. */
  private async reach(caller: Principal, id: string): Promise<string> {
    try {
      // An existence check only (the counts of `get` read the whole collection).
      return (await this.collections.toAsk(caller, [id]))[0];
    } catch (error) {
      throw error instanceof NotFoundError ? NotFoundError.named('Vector store', id) : error;
    }
  }

  private async reachForWriting(caller: Principal, id: string): Promise<string> {
    try {
      return await this.collections.toWrite(caller, id);
    } catch (error) {
      throw error instanceof NotFoundError ? NotFoundError.named('Vector store', id) : error;
    }
  }

  /** Deletes an attachment's document in the attachment's transaction (one already gone is no matter). */
  private forgetDocument(caller: Principal): ForgetDocument {
    return async (manager, collection, documentId) => {
      await this.documents.removeWithin(
        manager,
        { organizationId: caller.organizationId, collectionIds: [collection] },
        documentId,
      );
    };
  }
}
