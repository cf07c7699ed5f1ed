import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** A file of `POST /v1/files`, without its bytes. */
export interface FileRow {
  id: string;
  organization_id: string;
  filename: string;
  mimetype: string;
  purpose: string;
  bytes: number;
  created_at: Date;
}

/** A collection as a vector store, with what its attached files came to. */
export interface VectorStoreRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, string | number>;
  created_at: Date;
  usage_bytes: number;
  in_progress: number;
  completed: number;
  failed: number;
}

export interface VectorStoreFileRow {
  collection_id: string;
  file_id: string;
  document_id: string | null;
  status: 'in_progress' | 'completed' | 'failed';
  last_error: { code: string; message: string } | null;
  attributes: Record<string, string | number>;
  usage_bytes: number;
  created_at: Date;
}

/** OpenAI's list window: `limit` after (or before) the item `after`, in `order` of creation. */
export interface ListWindow {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
  before?: string;
}

const STORE_COLUMNS = `c.id, c.organization_id, c.name, c.description, c.metadata, c.created_at,
  coalesce((SELECT sum(d.size_bytes) FROM documents d WHERE d.collection_id = c.id), 0)::bigint AS usage_bytes,
  (SELECT count(*) FROM vector_store_files v WHERE v.collection_id = c.id AND v.status = 'in_progress') AS in_progress,
  (SELECT count(*) FROM vector_store_files v WHERE v.collection_id = c.id AND v.status = 'completed') AS completed,
  (SELECT count(*) FROM vector_store_files v WHERE v.collection_id = c.id AND v.status = 'failed') AS failed`;

/** What an attachment shows (not its queue's lease). */
const ATTACHMENT_COLUMNS = `collection_id, file_id, document_id, status, last_error, attributes, usage_bytes, created_at`;

/**
 * A file a key limited to collections (\$2) may reach: attached to none of the others, and either
 * uploaded within its collections or attached to one of them (a wider caller's unattached upload is not its).
 */
const WITHIN_REACH = `($2::uuid[] IS NULL OR (
    NOT EXISTS (SELECT 1 FROM vector_store_files v WHERE v.file_id = f.id AND v.collection_id <> ALL($2::uuid[]))
    AND ((f.collection_ids IS NOT NULL AND f.collection_ids <@ $2::uuid[])
      OR EXISTS (SELECT 1 FROM vector_store_files v WHERE v.file_id = f.id AND v.collection_id = ANY($2::uuid[])))))`;

/**
 * A window of a table ordered by (created_at, id): the SQL after `WHERE …` and its parameters, starting
 * at `$first`. `limit + 1` rows are read, so the caller can tell `has_more`.
 */
function windowSql(alias: string, table: string, key: string, window: ListWindow, first: number, within = '') {
  const forward = window.order === 'desc' ? '<' : '>';
  const params: unknown[] = [];
  let sql = '';
  if (window.after) {
    params.push(window.after);
    sql += ` AND (${alias}.created_at, ${alias}.${key}) ${forward} (SELECT created_at, ${key} FROM ${table} WHERE ${key} = $${first}::uuid${within} LIMIT 1)`;
  }
  if (window.before) {
    params.push(window.before);
    const backward = forward === '<' ? '>' : '<';
    sql += ` AND (${alias}.created_at, ${alias}.${key}) ${backward} (SELECT created_at, ${key} FROM ${table} WHERE ${key} = $${first + params.length - 1}::uuid${within} LIMIT 1)`;
  }
  const direction = window.order === 'desc' ? 'DESC' : 'ASC';
  sql += ` ORDER BY ${alias}.created_at ${direction}, ${alias}.${key} ${direction} LIMIT ${window.limit + 1}`;
  return { sql, params };
}

/**
 * Holds the organization's `files_usage` row (made if missing) for the transaction; its bytes. Every change
 * of an attachment's charge (an attach, a detach, a file's deletion, a failed file) takes it before the
 * attachment's row, so none of them deadlock.
 */
export async function lockUsage(manager: EntityManager, organizationId: string): Promise<number> {
  await manager.query(
    `INSERT INTO files_usage (organization_id, bytes) VALUES ($1, 0) ON CONFLICT (organization_id) DO NOTHING`,
    [organizationId],
  );
  const rows: { bytes: string }[] = await manager.query(
    `SELECT bytes FROM files_usage WHERE organization_id = $1 FOR UPDATE`,
    [organizationId],
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** `files` and `vector_store_files`, and collections as vector stores. */
@Injectable()
export class VectorStoresRepository {
  constructor(private readonly dataSource: DataSource) {}

  async stores(organizationId: string, reach: readonly string[] | null, window: ListWindow): Promise<VectorStoreRow[]> {
    const params: unknown[] = [organizationId, reach];
    const page = windowSql('c', 'collections', 'id', window, 3, ' AND organization_id = $1');
    return this.dataSource.query(
      `SELECT ${STORE_COLUMNS} FROM collections c
        WHERE c.organization_id = $1 AND c.deleted_at IS NULL
          AND ($2::uuid[] IS NULL OR c.id = ANY($2::uuid[]))${page.sql}`,
      [...params, ...page.params],
    );
  }

  async store(organizationId: string, id: string): Promise<VectorStoreRow | null> {
    const rows: VectorStoreRow[] = await this.dataSource.query(
      `SELECT ${STORE_COLUMNS} FROM collections c WHERE c.organization_id = $1 AND c.id = $2 AND c.deleted_at IS NULL`,
      [organizationId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Stores the file and adds its bytes to the organization's `files_usage`, in one statement, unless that
   * would pass `budgetBytes`: then nothing is stored (null). Concurrent uploads wait for each other's row
   * of `files_usage` and see its new total, so they never pass the budget together.
   * `reach`: the collections of the key that uploads it (null: every collection).
   */
  async insertFile(
    file: Omit<FileRow, 'id' | 'created_at'>,
    content: Buffer,
    reach: readonly string[] | null,
    budgetBytes: number,
  ): Promise<FileRow | null> {
    const rows: FileRow[] = await this.dataSource.query(
      `WITH taken AS (
         INSERT INTO files_usage AS u (organization_id, bytes)
         SELECT $1::uuid, $5::bigint WHERE $5::bigint <= $8::bigint
         ON CONFLICT (organization_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes
          WHERE u.bytes + EXCLUDED.bytes <= $8::bigint
         RETURNING 1)
       INSERT INTO files (organization_id, filename, mimetype, purpose, bytes, content, collection_ids)
       SELECT $1::uuid, $2::text, $3::text, $4::text, $5::int, $6::bytea, $7::uuid[] WHERE EXISTS (SELECT 1 FROM taken)
       RETURNING id, organization_id, filename, mimetype, purpose, bytes, created_at`,
      [file.organization_id, file.filename, file.mimetype, file.purpose, file.bytes, content, reach, budgetBytes],
    );
    return rows[0] ?? null;
  }

  /**
   * The organization's files; for a key limited to collections (`reach`), only those within its reach
   * (WITHIN_REACH).
   */
  files(
    organizationId: string,
    reach: readonly string[] | null,
    window: ListWindow,
    purpose?: string,
  ): Promise<FileRow[]> {
    const page = windowSql('f', 'files', 'id', window, 4, ' AND organization_id = $1');
    return this.dataSource.query(
      `SELECT f.id, f.organization_id, f.filename, f.mimetype, f.purpose, f.bytes, f.created_at FROM files f
        WHERE f.organization_id = $1 AND ($3::text IS NULL OR f.purpose = $3)
          AND ${WITHIN_REACH}${page.sql}`,
      [organizationId, reach, purpose ?? null, ...page.params],
    );
  }

  async file(organizationId: string, reach: readonly string[] | null, id: string): Promise<FileRow | null> {
    const rows: FileRow[] = await this.dataSource.query(
      `SELECT f.id, f.organization_id, f.filename, f.mimetype, f.purpose, f.bytes, f.created_at FROM files f
        WHERE f.organization_id = $1 AND f.id = $3
          AND ${WITHIN_REACH}`,
      [organizationId, reach, id],
    );
    return rows[0] ?? null;
  }

  /** The file's bytes; null once it is deleted. */
  async fileContent(id: string): Promise<Buffer | null> {
    const rows: { content: Buffer }[] = await this.dataSource.query(`SELECT content FROM files WHERE id = $1`, [id]);
    return rows[0]?.content ?? null;
  }

  /**
   * Deletes the file, its attachments and gives its bytes back to its organization's `files_usage`, in one
   * transaction; the documents it became, for the caller to delete. The file's row is held first, then the
   * organization's usage row (an attach's order), as an
   * attach and a worker storing an outcome hold it (KEY SHARE) before the attachment: a worker that stored
   * its document first is waited for and its document returned here; one after finds the file gone and
   * stores nothing, and so does an attach of it (a 404).
   */
  deleteFile(id: string): Promise<{ collection_id: string; document_id: string | null }[]> {
    return this.dataSource.transaction(async (manager) => {
      const owner: { organization_id: string }[] = await manager.query(
        `SELECT organization_id FROM files WHERE id = $1 FOR UPDATE`,
        [id],
      );
      if (owner.length > 0) await lockUsage(manager, owner[0].organization_id);
      const [attached]: [{ collection_id: string; document_id: string | null }[], number] = await manager.query(
        `DELETE FROM vector_store_files WHERE file_id = $1 RETURNING collection_id, document_id`,
        [id],
      );
      await manager.query(
        `WITH gone AS (DELETE FROM files WHERE id = $1 RETURNING organization_id, bytes)
         UPDATE files_usage u SET bytes = u.bytes - gone.bytes FROM gone WHERE u.organization_id = gone.organization_id`,
        [id],
      );
      return attached;
    });
  }

  async attachment(collectionId: string, fileId: string): Promise<VectorStoreFileRow | null> {
    const rows: VectorStoreFileRow[] = await this.dataSource.query(
      `SELECT ${ATTACHMENT_COLUMNS} FROM vector_store_files WHERE collection_id = $1 AND file_id = $2`,
      [collectionId, fileId],
    );
    return rows[0] ?? null;
  }

  attachments(collectionId: string, window: ListWindow, status?: string): Promise<VectorStoreFileRow[]> {
    const page = windowSql('v', 'vector_store_files', 'file_id', window, 3, ' AND collection_id = $1');
    return this.dataSource.query(
      `SELECT ${ATTACHMENT_COLUMNS} FROM vector_store_files v WHERE v.collection_id = $1 AND ($2::text IS NULL OR v.status = $2)${page.sql}`,
      [collectionId, status ?? null, ...page.params],
    );
  }

  /**
   * Queues the file for indexing in the collection (`in_progress`, unclaimed): a new attachment, or the
   * file attached again, whose earlier outcome is replaced (a worker still indexing it under its old
   * claim records nothing). The attachment takes the file's bytes of the organization's `files_usage`
   * (its `charged_bytes`; the trigger of migration AttachStorage adds them), unless that would pass
   * `budgetBytes`: then nothing changes ('full'). 'busy': the organization already has `queueBound` files
   * waiting (counted under its `files_usage` row, which every attach holds first: a burst cannot pass it).
   * 'gone': the collection was deleted meanwhile; 'no file': the file was.
   * `replacedDocumentId`: the document the earlier attach made, for the caller to delete.
   * Locks in one order with the file's deletion, a detach and the worker (collection, file, the
   * organization's usage row, attachment): no deadlock. (The usage row after the attachment, as before,
   * deadlocked concurrent attaches of one file: one held the attachment and waited for the usage row,
   * the other the reverse.)
   */
  queueAttachment(
    organizationId: string,
    collectionId: string,
    file: Pick<FileRow, 'id' | 'bytes'>,
    attributes: Record<string, string | number>,
    budgetBytes: number,
    queueBound: number,
  ): Promise<{ row: VectorStoreFileRow; replacedDocumentId: string | null } | 'full' | 'busy' | 'gone' | 'no file'> {
    return this.dataSource.transaction(async (manager) => {
      const collection: unknown[] = await manager.query(
        `SELECT 1 FROM collections WHERE id = $1 AND deleted_at IS NULL FOR KEY SHARE`,
        [collectionId],
      );
      if (collection.length === 0) return 'gone';
      const held: unknown[] = await manager.query(`SELECT 1 FROM files WHERE id = $1 FOR KEY SHARE`, [file.id]);
      if (held.length === 0) return 'no file';
      const usage = await lockUsage(manager, organizationId);
      const [{ queued }]: { queued: number }[] = await manager.query(
        `SELECT count(*)::int AS queued FROM vector_store_files WHERE organization_id = $1 AND status = 'in_progress'`,
        [organizationId],
      );
      if (queued >= queueBound) return 'busy';
      const earlier: { document_id: string | null; charged_bytes: string }[] = await manager.query(
        `SELECT document_id, charged_bytes FROM vector_store_files WHERE collection_id = $1 AND file_id = $2 FOR UPDATE`,
        [collectionId, file.id],
      );
      const added = file.bytes - Number(earlier[0]?.charged_bytes ?? 0);
      if (added > 0 && usage + added > budgetBytes) return 'full';
      const rows: VectorStoreFileRow[] = await manager.query(
        `INSERT INTO vector_store_files (collection_id, file_id, organization_id, status, attributes, charged_bytes)
         VALUES ($1, $2, $3, 'in_progress', $4, $5)
         ON CONFLICT (collection_id, file_id) DO UPDATE
            SET document_id = NULL, status = 'in_progress', last_error = NULL, attributes = excluded.attributes,
                usage_bytes = 0, claim = NULL, claimed_until = NULL, attempts = 0,
                charged_bytes = excluded.charged_bytes
         RETURNING ${ATTACHMENT_COLUMNS}`,
        [collectionId, file.id, organizationId, JSON.stringify(attributes), file.bytes],
      );
      return { row: rows[0], replacedDocumentId: earlier[0]?.document_id ?? null };
    });
  }

  /**
   * Deletes the attachment; the document it became (for the caller to delete), or null. The organization's
   * usage row first (the order an attach takes), then the row: a worker indexing the file finds it gone
   * and stores nothing; one that stored first is waited for.
   */
  detach(collectionId: string, fileId: string): Promise<{ document_id: string | null } | null> {
    return this.dataSource.transaction(async (manager) => {
      const owner: { organization_id: string }[] = await manager.query(
        `SELECT organization_id FROM vector_store_files WHERE collection_id = $1 AND file_id = $2`,
        [collectionId, fileId],
      );
      if (owner.length === 0) return null;
      await lockUsage(manager, owner[0].organization_id);
      const [rows]: [{ document_id: string | null }[], number] = await manager.query(
        `DELETE FROM vector_store_files WHERE collection_id = $1 AND file_id = $2 RETURNING document_id`,
        [collectionId, fileId],
      );
      return rows[0] ?? null;
    });
  }

  /** The files the documents came from (documents uploaded otherwise have none). */
  async filesOfDocuments(
    documentIds: readonly string[],
  ): Promise<Map<string, { file_id: string; filename: string; attributes: Record<string, string | number> }>> {
    if (documentIds.length === 0) return new Map();
    const rows: {
      document_id: string;
      file_id: string;
      filename: string;
      attributes: Record<string, string | number>;
    }[] = await this.dataSource.query(
      `SELECT v.document_id, v.file_id, f.filename, v.attributes
           FROM vector_store_files v JOIN files f ON f.id = v.file_id WHERE v.document_id = ANY($1::uuid[])`,
      [[...documentIds]],
    );
    return new Map(rows.map((row) => [row.document_id, row]));
  }
}
