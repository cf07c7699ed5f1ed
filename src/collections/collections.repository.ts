import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, IsNull, type Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import { Collection } from './collection.entity.js';

/** A collection with what it holds. */
export interface CollectionWithCounts extends Collection {
  documentCount: number;
  chunkCount: number;
}

interface CountedRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, string | number>;
  created_at: Date;
  document_count: number;
  chunk_count: number;
}

const COUNTED = `SELECT c.id, c.organization_id, c.name, c.description, c.metadata, c.created_at,
                        (SELECT count(*) FROM documents d WHERE d.collection_id = c.id) AS document_count,
                        coalesce((SELECT s.chunk_count FROM corpus_stats s WHERE s.scope_id = c.id), 0) AS chunk_count
                   FROM collections c`;

function fromRow(row: CountedRow): CollectionWithCounts {
  return Object.assign(new Collection(), {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description,
    metadata: row.metadata,
    createdAt: row.created_at,
    documentCount: row.document_count,
    chunkCount: row.chunk_count,
  });
}

/** The `collections` table; methods that take an EntityManager run inside the caller's transaction. */
@Injectable()
export class CollectionsRepository {
  constructor(@InjectRepository(Collection) private readonly collections: Repository<Collection>) {}

  /** Oldest first (so `default` leads), within `ids` when given. */
  async page(
    organizationId: string,
    ids: readonly string[] | null,
    page: PageRequest,
  ): Promise<[CollectionWithCounts[], number]> {
    const where = `WHERE c.organization_id = $1 AND c.deleted_at IS NULL ${ids === null ? '' : 'AND c.id = ANY($2::uuid[])'}`;
    const params: unknown[] = ids === null ? [organizationId] : [organizationId, [...ids]];
    const [rows, counted] = await Promise.all([
      this.collections.query<CountedRow[]>(
        `${COUNTED} ${where} ORDER BY c.created_at, c.id LIMIT ${page.limit} OFFSET ${page.offset}`,
        params,
      ),
      this.collections.query<{ n: number }[]>(`SELECT count(*) AS n FROM collections c ${where}`, params),
    ]);
    return [rows.map(fromRow), counted[0].n];
  }

  async findCounted(organizationId: string, id: string): Promise<CollectionWithCounts | null> {
    const rows: CountedRow[] = await this.collections.query(
      `${COUNTED} WHERE c.organization_id = $1 AND c.id = $2 AND c.deleted_at IS NULL`,
      [organizationId, id],
    );
    return rows.length > 0 ? fromRow(rows[0]) : null;
  }

  /** Which of `ids` are collections of the organization. */
  async existing(organizationId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.collections.query(
      `SELECT id FROM collections WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
      [organizationId, [...ids]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** The organization's collections, oldest first, at most `limit`. */
  list(organizationId: string, limit: number): Promise<Collection[]> {
    return this.collections.find({
      where: { organizationId, deletedAt: IsNull() },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
    });
  }

  /**
   * Locks the organization against other collection creations until the transaction ends (NO KEY UPDATE:
   * inserts that reference it do not wait) and counts its collections.
   */
  async lockAndCount(manager: EntityManager, organizationId: string): Promise<number> {
    await manager.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
    const rows: { n: number }[] = await manager.query(
      'SELECT count(*) AS n FROM collections WHERE organization_id = $1 AND deleted_at IS NULL',
      [organizationId],
    );
    return rows[0].n;
  }

  async insert(
    manager: EntityManager,
    collection: Pick<Collection, 'organizationId' | 'name' | 'description' | 'metadata'>,
  ): Promise<Collection> {
    return manager.save(manager.create(Collection, collection));
  }

  /** The collection locked until the transaction ends (uploads into it wait, or fail once it is gone). */
  lock(manager: EntityManager, organizationId: string, id: string): Promise<Collection | null> {
    return manager.findOne(Collection, {
      where: { id, organizationId, deletedAt: IsNull() },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: Partial<Pick<Collection, 'name' | 'description' | 'metadata'>>,
  ): Promise<void> {
    if (Object.keys(changes).length > 0) await manager.update(Collection, { id }, changes);
  }

  /** Marks it deleted: out of every read at once; the purger deletes what it holds (CollectionPurger). */
  async markDeleted(manager: EntityManager, id: string): Promise<void> {
    await manager.query(`UPDATE collections SET deleted_at = clock_timestamp() WHERE id = $1`, [id]);
  }

  /** Collections marked deleted and not yet purged, oldest first. */
  async deleted(limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.collections.query(
      `SELECT id FROM collections WHERE deleted_at IS NOT NULL ORDER BY deleted_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Deletes at most `batch` documents of a collection marked deleted (their chunks by cascade); how many. Documents
   * another purger holds are skipped (it deletes them).
   */
  async purgeDocuments(manager: EntityManager, id: string, batch: number): Promise<number> {
    await holdFilesUsage(manager, id);
    const [rows]: [unknown[], number] = await manager.query(
      `WITH batch AS (
         SELECT d.id FROM documents d JOIN collections c ON c.id = d.collection_id
          WHERE d.collection_id = $1 AND c.deleted_at IS NOT NULL
          LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
       DELETE FROM documents WHERE id IN (SELECT id FROM batch) RETURNING id`,
      [id, batch],
    );
    return rows.length;
  }

  /** The collection itself, once marked deleted (what is left of it goes by cascade). */
  async deleteMarked(manager: EntityManager, id: string): Promise<void> {
    await holdFilesUsage(manager, id);
    await manager.query(`DELETE FROM collections WHERE id = $1 AND deleted_at IS NOT NULL`, [id]);
  }
}

/**
 * The collection's organization's files_usage row, before a delete whose cascade reaches attachments (their
 * trigger gives their bytes back to that row): the order an attach, a detach, a file's deletion and a
 * failing file take them, so none deadlocks with a purge.
 */
async function holdFilesUsage(manager: EntityManager, collectionId: string): Promise<void> {
  await manager.query(
    `SELECT 1 FROM files_usage WHERE organization_id = (SELECT organization_id FROM collections WHERE id = $1) FOR UPDATE`,
    [collectionId],
  );
}
