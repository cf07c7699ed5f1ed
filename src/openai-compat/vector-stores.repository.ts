import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Deletes, inside the caller's transaction, the document an attachment became; the attachment's deletion
 * and its document's commit together, so a failure leaves both (and a retry finishes the job).
 */
export type ForgetDocument = (manager: EntityManager, collectionId: string, documentId: string) => Promise<void>;

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
   * Deletes the file, its attachments, the documents they became (`forget`) and gives its bytes back to its
   * organization's `files_usage`, in one transaction. The file's row is held first (an attach and a worker
   * storing an outcome hold it, KEY SHARE, before the attachment), then the organization's usage row (the
   * order every change of an attachment's charge takes): a worker that stored its document first is waited
   * for and its document deleted here; one after finds the file gone and stores nothing, and so does an
   * attach of it (a 404).
   */
  deleteFile(id: string, forget: ForgetDocument): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      const owner: { organization_id: string }[] = await manager.query(
        `SELECT organization_id FROM files WHERE id = $1 FOR UPDATE`,
        [id],
      );
      if (owner.length > 0) await lockUsage(manager, owner[0].organization_id);
      await forgetAttached(manager, forget, `file_id = $1`, [id]);
      await manager.query(
        `WITH gone AS (DELETE FROM files WHERE id = $1 RETURNING organization_id, bytes)
         UPDATE files_usage u SET bytes = u.bytes - gone.bytes FROM gone WHERE u.organization_id = gone.organization_id`,
        [id],
      );
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
   * The document the earlier attach made is deleted (`forget`) in the same transaction, once the attach
   * is sure to go ahead.
   * Locks in one order with the file's deletion, a detach, `DELETE /v1/documents/{id}` and the worker
   * (collection, file, the organization's usage row, document, attachment): no deadlock. (The usage row
   * after the attachment deadlocked concurrent attaches of one file: one held the attachment and waited
   * for the usage row, the other the reverse.)
   */
  queueAttachment(
    organizationId: string,
    collectionId: string,
    file: Pick<FileRow, 'id' | 'bytes'>,
    attributes: Record<string, string | number>,
    budgetBytes: number,
    queueBound: number,
    forget: ForgetDocument,
  ): Promise<VectorStoreFileRow | 'full' | 'busy' | 'gone' | 'no file'> {
    return this.dataSource.transaction((manager) =>
      this.queueAttachmentWithin(
        manager,
        organizationId,
        collectionId,
        file,
        attributes,
        budgetBytes,
        queueBound,
        forget,
      ),
    );
  }

  /** `queueAttachment` inside the caller's transaction (a vector store created with its files). */
  async queueAttachmentWithin(
    manager: EntityManager,
    organizationId: string,
    collectionId: string,
    file: Pick<FileRow, 'id' | 'bytes'>,
    attributes: Record<string, string | number>,
    budgetBytes: number,
    queueBound: number,
    forget: ForgetDocument,
  ): Promise<VectorStoreFileRow | 'full' | 'busy' | 'gone' | 'no file'> {
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
    // An attachment's charge only changes under the usage row held above, so it can be read unlocked.
    const before: { document_id: string | null; charged_bytes: string }[] = await manager.query(
      `SELECT document_id, charged_bytes FROM vector_store_files WHERE collection_id = $1 AND file_id = $2`,
      [collectionId, file.id],
    );
    const added = file.bytes - Number(before[0]?.charged_bytes ?? 0);
    if (added > 0 && usage + added > budgetBytes) return 'full';
    // The earlier outcome's document before the attachment, as `DELETE /v1/documents/{id}` locks them.
    if (before[0]?.document_id) await forget(manager, collectionId, before[0].document_id);
    const earlier: { document_id: string | null }[] = await manager.query(
      `SELECT document_id FROM vector_store_files WHERE collection_id = $1 AND file_id = $2 FOR UPDATE`,
      [collectionId, file.id],
    );
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
    // A document a worker stored between the two reads.
    const replaced = earlier[0]?.document_id ?? null;
    if (replaced !== null) await forget(manager, collectionId, replaced);
    return rows[0];
  }

  /**
   * Deletes the attachment and the document it became (`forget`), in one transaction; false when it was
   * not attached. The organization's usage row first (the order an attach takes): a worker indexing the
   * file then finds the row gone and stores nothing; one that stored first is waited for, and its
   * document deleted too.
   */
  detach(collectionId: string, fileId: string, forget: ForgetDocument): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const owner: { organization_id: string }[] = await manager.query(
        `SELECT organization_id FROM vector_store_files WHERE collection_id = $1 AND file_id = $2`,
        [collectionId, fileId],
      );
      if (owner.length === 0) return false;
      await lockUsage(manager, owner[0].organization_id);
      return forgetAttached(manager, forget, `collection_id = $1 AND file_id = $2`, [collectionId, fileId]);
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

/**
 * Deletes the attachments `where` selects and the documents they became, inside the caller's transaction;
 * whether there was one. The documents first (each takes its attachment with it, by cascade), in the order
 * `DELETE /v1/documents/{id}` locks (document, then attachment), so the two never deadlock; then the rest
 * (files still queued, or a document stored meanwhile, deleted in turn).
 */
async function forgetAttached(
  manager: EntityManager,
  forget: ForgetDocument,
  where: string,
  params: unknown[],
): Promise<boolean> {
  const found: { collection_id: string; document_id: string | null }[] = await manager.query(
    `SELECT collection_id, document_id FROM vector_store_files WHERE ${where}`,
    params,
  );
  for (const { collection_id, document_id } of found)
    if (document_id !== null) await forget(manager, collection_id, document_id);
  const [rest]: [{ collection_id: string; document_id: string | null }[], number] = await manager.query(
    `DELETE FROM vector_store_files WHERE ${where} RETURNING collection_id, document_id`,
    params,
  );
  for (const { collection_id, document_id } of rest)
    if (document_id !== null) await forget(manager, collection_id, document_id);
  return found.length > 0 || rest.length > 0;
}
