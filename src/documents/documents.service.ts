import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { NotFoundError } from '../common/errors.js';
import type { PageRequest } from '../common/pagination.js';
import { SearchIndexRepository } from '../retrieval/search-index.repository.js';
import type { Document } from './document.entity.js';
import {
  corpusIdOfOwner,
  type DocumentOwner,
  type DocumentReach,
  DocumentsRepository,
} from './documents.repository.js';
import type { NewDocument, UnreadableDocumentError } from './document-input.js';
import { passagesOf } from './passages.js';
import { isForeignKeyViolation } from '../database/pg-errors.js';
import { KeyedBatcher } from '../common/keyed-batcher.js';

export type { DocumentOwner, DocumentReach } from './documents.repository.js';

/**
 * Documents of one owner. Storing a document chunks it and indexes the chunks in the same transaction,
 * so a document is searchable exactly when it is listed, and the owner's statistics always match.
 */
@Injectable()
export class DocumentsService {
  private readonly logger = new Logger(DocumentsService.name);
  private readonly batcher = new KeyedBatcher<{ owner: DocumentOwner; input: NewDocument }, Document>(
    (items) =>
      this.createMany(
        items[0].owner,
        items.map((item) => item.input),
      ),
    { maxItems: 64, maxWeight: 4_000_000, weight: (item) => item.input.content.length },
  );

  constructor(
    private readonly dataSource: DataSource,
    private readonly documents: DocumentsRepository,
    private readonly indexer: SearchIndexRepository,
  ) {}

  /** Stores one document; concurrent uploads to the same owner share a transaction (see KeyedBatcher). */
  create(owner: DocumentOwner, input: NewDocument): Promise<Document> {
    return this.batcher.submit(corpusIdOfOwner(owner), { owner, input });
  }

  /**
   * Stores several documents of one owner in one transaction, all or none: one multi-row insert of the
   * documents, one of their chunks, one update of the owner's statistics.
   */
  async createMany(owner: DocumentOwner, inputs: readonly NewDocument[]): Promise<Document[]> {
    try {
      return await this.dataSource.transaction((manager) => this.createWithin(manager, owner, inputs));
    } catch (error) {
      // The domain, organization or collection was deleted while this was being stored.
      if (isForeignKeyViolation(error)) throw new NotFoundError();
      throw error;
    }
  }

  /**
   * `createMany` inside the caller's transaction, for a caller that records something with the documents
   * (a vector store's file becomes `completed` in the same commit as its document).
   */
  async createWithin(
    manager: EntityManager,
    owner: DocumentOwner,
    inputs: readonly NewDocument[],
  ): Promise<Document[]> {
    const prepared = inputs.map((input) => ({ input, chunks: input.chunks ?? passagesOf(input.content, false) }));
    const rows = await this.documents.insertMany(
      manager,
      owner,
      prepared.map(({ input, chunks }) => ({
        title: input.title,
        content: input.content,
        metadata: input.metadata,
        contentType: input.contentType,
        sizeBytes: input.sizeBytes,
        chunkCount: chunks.length,
      })),
    );
    await this.indexer.addDocuments(
      manager,
      corpusIdOfOwner(owner),
      rows.map((row, i) => ({ documentId: row.id, title: row.title, chunks: prepared[i].chunks })),
    );
    return rows;
  }

  /**
   * An upload of an organization that could not be read: its `document.failed` webhook event. The
   * refusal itself (the 400) is the caller's answer whatever happens here, so a failure to record the
   * event is logged, not thrown.
   */
  async reportUnreadable(organizationId: string, failure: UnreadableDocumentError): Promise<void> {
    try {
      await this.documents.recordFailure(organizationId, failure.title, failure.reason);
    } catch (error) {
      this.logger.warn(`document.failed was not recorded: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async list(reach: DocumentReach, page: PageRequest): Promise<{ count: number; documents: Document[] }> {
    const [documents, count] = await this.documents.page(reach, page);
    return { count, documents };
  }

  /** One document with its content; a document out of reach (another owner's) is a 404 like a missing one. */
  async get(reach: DocumentReach, id: string): Promise<Document> {
    const document = await this.documents.findWithContent(reach, id);
    if (!document) throw NotFoundError.named('Document', id);
    return document;
  }

  /** A document by its id or one of its passages' ids, with its content, whatever its owner; null if none. */
  findByDocumentOrPassage(id: string): Promise<Document | null> {
    return this.documents.findWithContentByDocumentOrPassage(id);
  }

  /** Deletes a document, its chunks and its share of its corpus's statistics. */
  async remove(reach: DocumentReach, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.removeWithin(manager, reach, id))) throw NotFoundError.named('Document', id);
    });
  }

  /**
   * `remove` inside the caller's transaction, so the document goes with whatever pointed at it (a vector
   * store's attachment) or not at all; false when there was no such document.
   */
  async removeWithin(manager: EntityManager, reach: DocumentReach, id: string): Promise<boolean> {
    await this.documents.holdFilesUsageIfAttached(manager, id);
    const found = await this.documents.lockReachable(manager, reach, id);
    if (!found) return false;
    const corpusId = found.collectionId ?? found.domainId;
    if (corpusId === null) throw new Error(`document ${id} has no owner`);
    await this.indexer.removeDocuments(manager, corpusId, [id]);
    await this.documents.delete(manager, id);
    return true;
  }
}
