import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { AnswerNotKept } from '../common/errors.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** What a key holds when this request could not claim it. */
export interface HeldKeyRow {
  request_hash: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  not_kept: AnswerNotKept | null;
  /** In progress no longer: its execution died without an answer (the claim ran out). */
  abandoned: boolean;
}

export interface KeyClaim {
  organizationId: string;
  key: string;
  requestHash: string;
  claimId: string;
}

export interface AnswerToStore {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface StoreBounds {
  /** What one organization's stored answers may add up to (`stored_bytes`). */
  budgetBytes: number;
  /** The largest answer body kept. */
  maxAnswerBytes: number;
}

/**
 * What a stored row counts beyond its answer: the key, and about what PostgreSQL spends on the row
 * (tuple header, hash, ids, timestamps) and its index entries.
 */
export const ROW_OVERHEAD_BYTES = 200;

/** The `idempotency_keys` table, and each organization's total in `idempotency_usage`. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>) {}

  /**
   * Claims the key for this execution; true when it is ours to run. One statement, so that of any
   * number of requests (on any number of instances) racing with one key exactly one wins: the others
   * find the row and read it. A claim abandoned mid-flight (its process died: it counts no bytes), or
   * an expired row that counts none, is taken over in the same statement; an expired answer is first
   * forgotten by `forgetExpired` (which gives its bytes back); a live row is left alone, as DO NOTHING
   * would.
   */
  async claim(claim: KeyClaim, claimSeconds: number, ttlSeconds: number): Promise<boolean> {
    const rows: unknown[] = await this.keys.query(
      `INSERT INTO idempotency_keys AS k (organization_id, key, request_hash, claim_id, claimed_until, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), now() + make_interval(secs => $6))
       ON CONFLICT (organization_id, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, claim_id = EXCLUDED.claim_id,
              claimed_until = EXCLUDED.claimed_until, expires_at = EXCLUDED.expires_at, created_at = now(),
              response_status = NULL, response_headers = NULL, response_body = NULL, not_kept = NULL
        WHERE (k.response_status IS NULL AND k.claimed_until <= now()) OR (k.expires_at <= now() AND k.stored_bytes = 0)
       RETURNING 1`,
      [claim.organizationId, claim.key, claim.requestHash, claim.claimId, claimSeconds, ttlSeconds],
    );
    return rows.length > 0;
  }

  /** The live row of a key (null when it expired or was given back meanwhile). */
  async findLive(organizationId: string, key: string): Promise<HeldKeyRow | null> {
    const rows: HeldKeyRow[] = await this.keys.query(
      `SELECT request_hash, response_status, response_headers, response_body, not_kept,
              (response_status IS NULL AND claimed_until <= now()) AS abandoned
         FROM idempotency_keys
        WHERE organization_id = $1 AND key = $2 AND expires_at > now()`,
      [organizationId, key],
    );
    return rows[0] ?? null;
  }

  /**
   * The bytes the organization's stored answers count now, and whether an answer did not fit since
   * the purge last gave it bytes back.
   */
  async usage(organizationId: string): Promise<{ bytes: number; full: boolean }> {
    const rows: { bytes: string; full_until_purged: boolean }[] = await this.keys.query(
      `SELECT bytes, full_until_purged FROM idempotency_usage WHERE organization_id = $1`,
      [organizationId],
    );
    return rows.length === 0
      ? { bytes: 0, full: false }
      : { bytes: Number(rows[0].bytes), full: rows[0].full_until_purged };
  }

  /** Deletes the key's row if it has expired, giving its bytes back to the organization. */
  async forgetExpired(organizationId: string, key: string): Promise<void> {
    await this.keys.query(
      `WITH gone AS (
         DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND expires_at <= now()
         RETURNING organization_id, stored_bytes)
       UPDATE idempotency_usage u SET bytes = u.bytes - gone.stored_bytes, full_until_purged = false
         FROM gone WHERE u.organization_id = gone.organization_id`,
      [organizationId, key],
    );
  }

  /**
   * Stores the answer of the execution that holds the claim, within the bounds: an answer larger than
   * `maxAnswerBytes`, or one the organization's budget cannot take, is recorded as not kept (its replay
   * is refused, not run). The budget is taken in the same transaction as the row is written, so
   * concurrent answers cannot together pass it. A taken-over claim stores nothing. Answers whether it
   * was kept.
   */
  async storeResponse(claim: KeyClaim, answer: AnswerToStore, bounds: StoreBounds): Promise<AnswerNotKept | null> {
    const headers = JSON.stringify(answer.headers);
    const overhead = ROW_OVERHEAD_BYTES + Buffer.byteLength(claim.key);
    const answerBytes = Buffer.byteLength(answer.body) + Buffer.byteLength(headers);
    const tooLarge = Buffer.byteLength(answer.body) > bounds.maxAnswerBytes;
    return this.keys.manager.transaction(async (manager) => {
      let notKept: AnswerNotKept | null = tooLarge ? 'too_large' : null;
      if (!notKept && !(await this.take(manager, claim.organizationId, overhead + answerBytes, bounds.budgetBytes)))
        notKept = 'store_full';
      // A row that keeps no answer still counts its own bytes, within the budget or not: a flood of
      // answers that are not kept cannot grow the table for free either. One that did not fit marks
      // the store full: new keys are refused before they run, rather than run and not kept.
      if (notKept) await this.take(manager, claim.organizationId, overhead, null, notKept === 'store_full');
      const kept = notKept === null;
      const rows: unknown[] = await manager.query(
        `UPDATE idempotency_keys
            SET response_status = $4, response_headers = $5, response_body = $6, stored_bytes = $7, not_kept = $8
          WHERE organization_id = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL
         RETURNING 1`,
        [
          claim.organizationId,
          claim.key,
          claim.claimId,
          answer.status,
          kept ? headers : null,
          kept ? answer.body : null,
          kept ? overhead + answerBytes : overhead,
          notKept,
        ],
      );
      // The claim was taken over meanwhile: nothing stored, nothing counted (rolled back).
      if (rows.length === 0) throw new ClaimLostError();
      return notKept;
    });
  }

  /**
   * Adds `bytes` to the organization's usage, unless that would pass `budget` (null: unconditionally);
   * `markFull` marks the store full until the purge gives bytes back.
   */
  private async take(
    manager: EntityManager,
    organizationId: string,
    bytes: number,
    budget: number | null,
    markFull = false,
  ) {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_usage AS u (organization_id, bytes, full_until_purged)
       SELECT $1, $2, $4 WHERE $3::bigint IS NULL OR $2 <= $3::bigint
       ON CONFLICT (organization_id) DO UPDATE
          SET bytes = u.bytes + EXCLUDED.bytes, full_until_purged = u.full_until_purged OR EXCLUDED.full_until_purged
        WHERE $3::bigint IS NULL OR u.bytes + EXCLUDED.bytes <= $3::bigint
       RETURNING 1`,
      [organizationId, bytes, budget, markFull],
    );
    return rows.length > 0;
  }

  /** Gives the key back (an answer that is not stored), so that a retry runs again. */
  async release(claim: KeyClaim): Promise<void> {
    await this.keys.query(
      `DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL`,
      [claim.organizationId, claim.key, claim.claimId],
    );
  }

  /**
   * Deletes up to `batch` expired rows and gives their bytes back to their organizations; answers how
   * many. Rows another instance is deleting are skipped rather than waited for.
   */
  async deleteExpired(batch: number): Promise<number> {
    const rows: { deleted: number }[] = await this.keys.query(
      `WITH gone AS (
         DELETE FROM idempotency_keys WHERE (organization_id, key) IN (
           SELECT organization_id, key FROM idempotency_keys WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING organization_id, stored_bytes),
       per_organization AS (
         SELECT organization_id, sum(stored_bytes) AS bytes, count(*) AS n FROM gone GROUP BY organization_id),
       freed AS (
         UPDATE idempotency_usage u SET bytes = u.bytes - p.bytes, full_until_purged = false
           FROM per_organization p WHERE u.organization_id = p.organization_id)
       SELECT coalesce(sum(n), 0)::int AS deleted FROM per_organization`,
      [batch],
    );
    return rows[0].deleted;
  }
}

/** Thrown inside the settle transaction to roll it back when the claim is no longer ours. */
class ClaimLostError extends Error {
  constructor() {
    super('the idempotency claim was taken over before its answer was stored');
  }
}
