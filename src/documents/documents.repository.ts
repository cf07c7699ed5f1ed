import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { And, type EntityManager, In, Raw, type Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import { Document } from './document.entity.js';

/** Where a new document goes: a public domain, or one collection of an organization. */
export type DocumentOwner = { domainId: string } | { organizationId: string; collectionId: string };

/**
 * Which documents a read may reach: a public domain's, or an organization's in the collections listed
 * (null: every collection of the organization).
 */
export type DocumentReach = { domainId: string } | { organizationId: string; collectionIds: readonly string[] | null };

export type NewDocumentRow = Pick<
  Document,
  'title' | 'content' | 'metadata' | 'contentType' | 'sizeBytes' | 'chunkCount'
>;

/** The corpus a new document is indexed in: its domain's, or its collection's. */
export function corpusIdOfOwner(owner: DocumentOwner): string {
  return 'domainId' in owner ? owner.domainId : owner.collectionId;
}

function ownerColumns(owner: DocumentOwner) {
  return 'domainId' in owner
    ? { domainId: owner.domainId, organizationId: null, collectionId: null }
    : { domainId: null, organizationId: owner.organizationId, collectionId: owner.collectionId };
}

/**
 * Not in a collection being deleted: a deleted collection's documents leave every read at once, before
 * the purger gets to them (few collections are ever being deleted at once: a small list to look in).
 */
const LIVE_COLLECTION = (alias: string) => `${alias} NOT IN (SELECT id FROM collections WHERE deleted_at IS NOT NULL)`;

/** The reach as a filter (the other owner column is null by the table's check constraint). */
function reachFilter(reach: DocumentReach) {
  if ('domainId' in reach) return { domainId: reach.domainId };
  return reach.collectionIds === null
    ? { organizationId: reach.organizationId, collectionId: Raw(LIVE_COLLECTION) }
    : {
        organizationId: reach.organizationId,
        collectionId: And(In([...reach.collectionIds]), Raw(LIVE_COLLECTION)),
      };
}

/**
 * The `documents` table, each row owned by a public domain or an organization's collection. Methods
 * that take an EntityManager run inside the caller's transaction (a document is written with its chunks).
 */
@Injectable()
export class DocumentsRepository {
  constructor(@InjectRepository(Document) private readonly documents: Repository<Document>) {}

  insertMany(manager: EntityManager, owner: DocumentOwner, rows: readonly NewDocumentRow[]): Promise<Document[]> {
    return manager.save(rows.map((row) => manager.create(Document, { ...ownerColumns(owner), ...row })));
  }

  /** Newest first. */
  page(reach: DocumentReach, page: PageRequest): Promise<[Document[], number]> {
    return this.documents.findAndCount({
      where: reachFilter(reach),
      order: { createdAt: 'DESC', id: 'ASC' },
      take: page.limit,
      skip: page.offset,
    });
  }

  /** With its content, which listings leave out; null for a missing document or one out of reach. */
  findWithContent(reach: DocumentReach, id: string): Promise<Document | null> {
    return this.documents
      .createQueryBuilder('d')
      .addSelect('d.content')
      .where({ id, ...reachFilter(reach) })
      .getOne();
  }

  /**
   * With its content, whoever owns it: the document `id` names, or the one holding the passage `id` names
   * (a search result's id). The caller decides whether the owner may be read.
   */
  findWithContentByDocumentOrPassage(id: string): Promise<Document | null> {
    return this.documents
      .createQueryBuilder('d')
      .addSelect('d.content')
      .where('d.id = :id OR d.id = (SELECT c.document_id FROM document_chunks c WHERE c.id = :id)', { id })
      .andWhere(`(d.collection_id IS NULL OR ${LIVE_COLLECTION('d.collection_id')})`)
      .getOne();
  }

  /** Locks the document until the transaction ends; null for a missing document or one out of reach. */
  /**
   * For a document a vector store's file became: holds its organization's `files_usage` row, which the
   * attachment's deletion (by cascade) changes. Every change of an attachment's charge takes that row
   * before the document and the attachment, so a document's deletion racing a re-attach of its file
   * cannot deadlock. Nothing for other documents (their deletions do not wait for one another).
   */
  async holdFilesUsageIfAttached(manager: EntityManager, id: string): Promise<void> {
    await manager.query(
      `SELECT 1 FROM files_usage
        WHERE organization_id = (SELECT organization_id FROM vector_store_files WHERE document_id = $1 LIMIT 1)
          FOR UPDATE`,
      [id],
    );
  }

  lockReachable(manager: EntityManager, reach: DocumentReach, id: string): Promise<Document | null> {
    return manager.findOne(Document, {
      where: { id, ...reachFilter(reach) },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /**
   * An organization's upload that could not be read: its `document.failed` event, recorded in the
   * webhooks outbox by the same database function the documents' triggers call (no row changed, so no
   * trigger fires). Nothing was stored, so there is no `document_id`.
   */
  async recordFailure(organizationId: string, title: string, reason: string): Promise<void> {
    await this.documents.query(
      `SELECT webhook_record_event($1, 'document.failed', jsonb_build_object(
         'document_id', NULL, 'collection_id', NULL, 'title', $2::text, 'reason', $3::text))`,
      [organizationId, title, reason],
    );
  }

  /** Its chunks go with it (cascade). */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(Document, { id });
  }
}
