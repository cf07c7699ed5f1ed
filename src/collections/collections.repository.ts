import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
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
    const where = `WHERE c.organization_id = $1 ${ids === null ? '' : 'AND c.id = ANY($2::uuid[])'}`;
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
    const rows: CountedRow[] = await this.collections.query(`${COUNTED} WHERE c.organization_id = $1 AND c.id = $2`, [
      organizationId,
      id,
    ]);
    return rows.length > 0 ? fromRow(rows[0]) : null;
  }

  /** Which of `ids` are collections of the organization. */
  async existing(organizationId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.collections.query(
      `SELECT id FROM collections WHERE organization_id = $1 AND id = ANY($2::uuid[])`,
      [organizationId, [...ids]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** The organization's collections, oldest first, at most `limit`. */
  list(organizationId: string, limit: number): Promise<Collection[]> {
    return this.collections.find({ where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' }, take: limit });
  }

  /**
   * Locks the organization against other collection creations until the transaction ends (NO KEY UPDATE:
   * inserts that reference it do not wait) and counts its collections.
   */
  async lockAndCount(manager: EntityManager, organizationId: string): Promise<number> {
    await manager.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
    const rows: { n: number }[] = await manager.query(
      'SELECT count(*) AS n FROM collections WHERE organization_id = $1',
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
    return manager.findOne(Collection, { where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: Partial<Pick<Collection, 'name' | 'description' | 'metadata'>>,
  ): Promise<void> {
    if (Object.keys(changes).length > 0) await manager.update(Collection, { id }, changes);
  }

  /** Its documents go with it (cascade), and their chunks with them. */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(Collection, { id });
  }
}
