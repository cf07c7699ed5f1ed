import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import type { Corpus } from '../retrieval/retriever.js';
import { Document } from './document.entity.js';

export type NewDocumentRow = Pick<
  Document,
  'title' | 'content' | 'metadata' | 'contentType' | 'sizeBytes' | 'chunkCount'
>;

function ownerColumns(owner: Corpus): { domainId: string | null; organizationId: string | null } {
  return 'domainId' in owner
    ? { domainId: owner.domainId, organizationId: null }
    : { domainId: null, organizationId: owner.organizationId };
}

/** The owner as a filter (the other column is null by the table's check constraint). */
function ownerFilter(owner: Corpus): { domainId: string } | { organizationId: string } {
  return 'domainId' in owner ? { domainId: owner.domainId } : { organizationId: owner.organizationId };
}

/**
 * The `documents` table, each row owned by a public domain or an organization. Methods that take an
 * EntityManager run inside the caller's transaction (a document is written with its chunks).
 */
@Injectable()
export class DocumentsRepository {
  constructor(@InjectRepository(Document) private readonly documents: Repository<Document>) {}

  insertMany(manager: EntityManager, owner: Corpus, rows: readonly NewDocumentRow[]): Promise<Document[]> {
    return manager.save(rows.map((row) => manager.create(Document, { ...ownerColumns(owner), ...row })));
  }

  /** Newest first. */
  page(owner: Corpus, page: PageRequest): Promise<[Document[], number]> {
    return this.documents.findAndCount({
      where: ownerFilter(owner),
      order: { createdAt: 'DESC', id: 'ASC' },
      take: page.limit,
      skip: page.offset,
    });
  }

  /** With its content, which listings leave out; null for a missing document or another owner's. */
  findWithContent(owner: Corpus, id: string): Promise<Document | null> {
    return this.documents
      .createQueryBuilder('d')
      .addSelect('d.content')
      .where({ id, ...ownerFilter(owner) })
      .getOne();
  }

  /** Locks the owner's document until the transaction ends; false for a missing document or another owner's. */
  async lockOwned(manager: EntityManager, owner: Corpus, id: string): Promise<boolean> {
    const document = await manager.findOne(Document, {
      where: { id, ...ownerFilter(owner) },
      lock: { mode: 'pessimistic_write' },
    });
    return document !== null;
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
