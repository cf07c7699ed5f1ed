import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** What a key holds when this request could not claim it. */
export interface HeldKeyRow {
  request_hash: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

export interface KeyClaim {
  organizationId: string;
  key: string;
  requestHash: string;
  claimId: string;
}

/** The `idempotency_keys` table. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>) {}

  /**
   * Claims the key for this execution; true when it is ours to run. One statement, so that of any
   * number of requests (on any number of instances) racing with one key exactly one wins: the others
   * find the row and read it. A row that has expired, or whose claim was abandoned (its process died
   * mid-flight), is taken over in the same statement; a live row is left alone, as DO NOTHING would.
   */
  async claim(claim: KeyClaim, claimSeconds: number, ttlSeconds: number): Promise<boolean> {
    const rows: unknown[] = await this.keys.query(
      `INSERT INTO idempotency_keys AS k (organization_id, key, request_hash, claim_id, claimed_until, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), now() + make_interval(secs => $6))
       ON CONFLICT (organization_id, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, claim_id = EXCLUDED.claim_id,
              claimed_until = EXCLUDED.claimed_until, expires_at = EXCLUDED.expires_at, created_at = now(),
              response_status = NULL, response_headers = NULL, response_body = NULL
        WHERE k.expires_at <= now() OR (k.response_status IS NULL AND k.claimed_until <= now())
       RETURNING 1`,
      [claim.organizationId, claim.key, claim.requestHash, claim.claimId, claimSeconds, ttlSeconds],
    );
    return rows.length > 0;
  }

  /** The live row of a key (null when it expired or was given back meanwhile). */
  async findLive(organizationId: string, key: string): Promise<HeldKeyRow | null> {
    const rows: HeldKeyRow[] = await this.keys.query(
      `SELECT request_hash, response_status, response_headers, response_body FROM idempotency_keys
        WHERE organization_id = $1 AND key = $2 AND expires_at > now()`,
      [organizationId, key],
    );
    return rows[0] ?? null;
  }

  /** Stores the answer of the execution that holds the claim (a taken-over claim stores nothing). */
  async storeResponse(
    claim: KeyClaim,
    response: { status: number; headers: Record<string, string>; body: string },
  ): Promise<void> {
    await this.keys.query(
      `UPDATE idempotency_keys SET response_status = $4, response_headers = $5, response_body = $6
        WHERE organization_id = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL`,
      [
        claim.organizationId,
        claim.key,
        claim.claimId,
        response.status,
        JSON.stringify(response.headers),
        response.body,
      ],
    );
  }

  /** Gives the key back (an answer that is not stored), so that a retry runs again. */
  async release(claim: KeyClaim): Promise<void> {
    await this.keys.query(
      `DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL`,
      [claim.organizationId, claim.key, claim.claimId],
    );
  }

  /**
   * Deletes up to `batch` expired rows; answers how many. Rows another instance is deleting are
   * skipped rather than waited for.
   */
  async deleteExpired(batch: number): Promise<number> {
    const [, deleted]: [unknown, number] = await this.keys.query(
      `DELETE FROM idempotency_keys WHERE (organization_id, key) IN (
         SELECT organization_id, key FROM idempotency_keys WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [batch],
    );
    return deleted;
  }
}
