import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { lockUsage } from './vector-stores.repository.js';

/**
 * How many organizations, in turn order, a claim looks at: when the first one's due files are all held by
 * another transaction (SKIP LOCKED finds none), the next one's file is claimed, so one held row never
 * stalls the queue for every organization.
 */
const CLAIM_CANDIDATE_ORGANIZATIONS = 8;

/** Organizations whose last turn an instance remembers (the least recent forgotten first). */
const SERVED_REMEMBERED = 10_000;

/** A file attached to a vector store, claimed by this instance for indexing. */
export interface ClaimedAttach {
  collection_id: string;
  file_id: string;
  organization_id: string;
  /** This claim's token: only its holder may record the outcome. */
  claim: string;
  /** This claim's number (1 for the first). */
  attempts: number;
  attributes: Record<string, string | number>;
  filename: string;
  mimetype: string;
  bytes: number;
}

/** Files of one organization that may be waiting to be indexed at once; the next attach is a 429. */
export const ATTACHES_QUEUED_PER_ORGANIZATION = 1_000;

/**
 * The attach queue in SQL: a `vector_store_files` row in `in_progress` is a job. A claim takes the oldest
 * due row with FOR UPDATE SKIP LOCKED and, in the same statement, gives it a lease (`claimed_until`) and
 * a new `claim` token and counts the attempt; the lease commits at once, so no transaction stays open
 * while the file is extracted. A worker that dies leaves its row due again when the lease ends; an
 * outcome is recorded only under the claim it was made under (a detach, a new attach or another
 * instance's claim since then wins).
 */
@Injectable()
export class AttachQueue {
  /** When each organization was last served on this instance (a turn number), for the round robin. */
  private readonly served = new Map<string, number>();
  private turns = 0;

  constructor(private readonly dataSource: DataSource) {}

  /**
   * A due job, fair between organizations: among the organizations with due files and fewer than
   * `perOrganization` jobs leased now, the one with the fewest leased (ties: the one this instance served
   * least recently, never served first, then the oldest waiting file), and its oldest due file; or null.
   * A round robin: one organization's backlog never holds another's file back longer than one file's
   * indexing, however many organizations wait (ordering ties by the oldest waiting file let two
   * organizations with old backlogs take every turn from a third). The leased counts are aggregated once per claim (not once per candidate
   * row: with 1,000 collections and 1,000 waiting files that was a million loops and 30 s), over the
   * partial index on (organization_id, created_at) of the files `in_progress`.
   * Instances share the queue; when the first organization's due files are all held by another
   * transaction, the next organization in turn is served (CLAIM_CANDIDATE_ORGANIZATIONS). Two claiming for one organization at the same instant may both pass its
   * bound once (each only sees committed leases), which is a moment's extra extraction, not a leak.
   */
  async claim(perOrganization: number, leaseMs: number): Promise<ClaimedAttach | null> {
    const [rows]: [ClaimedAttach[], number] = await this.dataSource.query(
      `WITH waiting AS MATERIALIZED (
         SELECT v.organization_id, v.collection_id, v.created_at,
                v.claim IS NOT NULL AND v.claimed_until >= clock_timestamp() AS leased,
                v.claimed_until IS NULL OR v.claimed_until < clock_timestamp() AS due
           FROM vector_store_files v WHERE v.status = 'in_progress'
       ),
       turns AS MATERIALIZED (
         SELECT w.organization_id, count(*) FILTER (WHERE w.leased) AS leased,
                max(s.turn) AS served,
                min(w.created_at) FILTER (WHERE w.due AND c.deleted_at IS NULL) AS head
           FROM waiting w JOIN collections c ON c.id = w.collection_id
           LEFT JOIN unnest($3::uuid[], $4::bigint[]) AS s(organization_id, turn) ON s.organization_id = w.organization_id
          GROUP BY w.organization_id
         HAVING count(*) FILTER (WHERE w.leased) < $1
            AND count(*) FILTER (WHERE w.due AND c.deleted_at IS NULL) > 0
          ORDER BY 2, 3 NULLS FIRST, 4
          LIMIT ${CLAIM_CANDIDATE_ORGANIZATIONS}
       ),
       due AS (
         SELECT next.collection_id, next.file_id
           FROM (SELECT t.organization_id, row_number() OVER (ORDER BY t.leased, t.served NULLS FIRST, t.head) AS turn FROM turns t) t
           CROSS JOIN LATERAL (
           SELECT v.collection_id, v.file_id FROM vector_store_files v JOIN collections c ON c.id = v.collection_id
            WHERE v.organization_id = t.organization_id AND v.status = 'in_progress'
              AND (v.claimed_until IS NULL OR v.claimed_until < clock_timestamp()) AND c.deleted_at IS NULL
            ORDER BY v.created_at
            LIMIT 1
              FOR UPDATE OF v SKIP LOCKED) next
          ORDER BY t.turn
          LIMIT 1
       )
       UPDATE vector_store_files v
          SET claim = gen_random_uuid(), attempts = v.attempts + 1,
              claimed_until = clock_timestamp() + $2 * interval '1 millisecond'
         FROM due, collections c, files f
        WHERE v.collection_id = due.collection_id AND v.file_id = due.file_id
          AND c.id = v.collection_id AND f.id = v.file_id
       RETURNING v.collection_id, v.file_id, c.organization_id, v.claim, v.attempts, v.attributes,
                 f.filename, f.mimetype, f.bytes`,
      [perOrganization, leaseMs, [...this.served.keys()], [...this.served.values()]],
    );
    const claimed = rows.at(0);
    if (claimed) this.noteServed(claimed.organization_id);
    return claimed ?? null;
  }

  /** The organization goes to the back of the round (a Map keeps insertion order: the oldest turns first). */
  private noteServed(organizationId: string): void {
    this.served.delete(organizationId);
    this.served.set(organizationId, ++this.turns);
    if (this.served.size <= SERVED_REMEMBERED) return;
    for (const oldest of this.served.keys()) {
      this.served.delete(oldest);
      return;
    }
  }

  /**
   * Extends the lease of a job still being worked on; false when the claim was lost. A row held by a
   * transaction (the worker's own, storing the document, or a detach deciding) is skipped, not waited
   * for: a claim cannot take a held row, and waiting would let the lease run out behind a long store.
   */
  async renew(job: ClaimedAttach, leaseMs: number): Promise<boolean> {
    const rows: { renewed: boolean }[] = await this.dataSource.query(
      `WITH mine AS (
         SELECT collection_id, file_id FROM vector_store_files
          WHERE collection_id = $1 AND file_id = $2 AND claim = $3 AND status = 'in_progress'
            FOR NO KEY UPDATE SKIP LOCKED),
       renewed AS (
         UPDATE vector_store_files v SET claimed_until = clock_timestamp() + $4 * interval '1 millisecond'
           FROM mine WHERE v.collection_id = mine.collection_id AND v.file_id = mine.file_id
         RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM renewed)
           OR EXISTS (SELECT 1 FROM vector_store_files
                       WHERE collection_id = $1 AND file_id = $2 AND claim = $3 AND status = 'in_progress') AS renewed`,
      [job.collection_id, job.file_id, job.claim, leaseMs],
    );
    return rows[0]?.renewed ?? false;
  }

  /** Gives the job back to the queue, due again in `delayMs` (a transient failure: the extractor was busy). */
  async release(job: ClaimedAttach, delayMs: number): Promise<void> {
    // Not an interruption: the attempt the claim counted is given back.
    await this.dataSource.query(
      `UPDATE vector_store_files
          SET claim = NULL, claimed_until = clock_timestamp() + $4 * interval '1 millisecond',
              attempts = greatest(attempts - 1, 0)
        WHERE collection_id = $1 AND file_id = $2 AND claim = $3 AND status = 'in_progress'`,
      [job.collection_id, job.file_id, job.claim, delayMs],
    );
  }

  /**
   * Inside the transaction that stores the file's document: holds the collection (as the document's
   * foreign key would: a deletion of the collection waits, or has happened and this finds nothing) and
   * then the job's row under its claim. False: the file was detached, attached again, or its store or
   * the file deleted meanwhile; the caller stores nothing. Collection, file, then the row: the order an
   * attach and the file's deletion take them too, so none of them deadlock.
   */
  async holdForOutcome(manager: EntityManager, job: ClaimedAttach): Promise<boolean> {
    const collection: unknown[] = await manager.query(
      `SELECT 1 FROM collections WHERE id = $1 AND deleted_at IS NULL FOR KEY SHARE`,
      [job.collection_id],
    );
    if (collection.length === 0) return false;
    const file: unknown[] = await manager.query(`SELECT 1 FROM files WHERE id = $1 FOR KEY SHARE`, [job.file_id]);
    if (file.length === 0) return false;
    const row: unknown[] = await manager.query(
      `SELECT 1 FROM vector_store_files
        WHERE collection_id = $1 AND file_id = $2 AND claim = $3 AND status = 'in_progress' FOR UPDATE`,
      [job.collection_id, job.file_id, job.claim],
    );
    return row.length > 0;
  }

  async recordCompleted(manager: EntityManager, job: ClaimedAttach, documentId: string): Promise<void> {
    await manager.query(
      `UPDATE vector_store_files
          SET status = 'completed', document_id = $3, last_error = NULL, usage_bytes = $4,
              claim = NULL, claimed_until = NULL
        WHERE collection_id = $1 AND file_id = $2`,
      [job.collection_id, job.file_id, documentId, job.bytes],
    );
  }

  /**
   * Records the refusal under the job's claim (its bytes given back to `files_usage`: nothing is stored);
   * false when the claim was lost meanwhile.
   */
  async recordFailed(job: ClaimedAttach, error: { code: string; message: string }): Promise<boolean> {
    // The organization's usage row before the attachment's (the charge given back): an attach's order.
    return this.dataSource.transaction(async (manager) => {
      await lockUsage(manager, job.organization_id);
      const [, changed]: [unknown, number] = await manager.query(
        `UPDATE vector_store_files
            SET status = 'failed', last_error = $4, document_id = NULL, usage_bytes = 0,
                claim = NULL, claimed_until = NULL, charged_bytes = 0
          WHERE collection_id = $1 AND file_id = $2 AND claim = $3 AND status = 'in_progress'`,
        [job.collection_id, job.file_id, job.claim, JSON.stringify(error)],
      );
      return changed > 0;
    });
  }

  /** The organization's files waiting or being indexed, in all its vector stores. */
  async queued(organizationId: string): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM vector_store_files WHERE organization_id = $1 AND status = 'in_progress'`,
      [organizationId],
    );
    return rows[0].n;
  }
}
