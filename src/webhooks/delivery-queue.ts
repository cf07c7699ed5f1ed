import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DISABLE_AFTER_FAILING_MS } from './webhook-events.js';

/** One claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  /** This attempt's number (1 for the first). */
  attempts: number;
  payload: unknown;
  url: string;
  secret_encrypted: string;
  /** Still signing alongside, during a rotation's 24 hours. */
  previous_secret_encrypted: string | null;
}

export type AttemptOutcome =
  | { kind: 'delivered'; status: number; body: string }
  | { kind: 'failed'; status: number | null; body: string; error: string; retryInMs: number | null };

/**
 * The delivery queue in SQL. A claim takes due deliveries with FOR UPDATE SKIP LOCKED and, in the same
 * statement, marks them `sending` with a lease (next_attempt_at moved past the send's timeout) and counts
 * the attempt: two instances never claim one delivery at once, and a worker that dies leaves it due
 * again when the lease ends. The lease commits at once, so no transaction stays open during a send
 * (which the embedded store's few connections could not afford).
 */
@Injectable()
export class DeliveryQueue {
  constructor(private readonly dataSource: DataSource) {}

  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.dataSource
      .query(
        `WITH due AS (
           SELECT d.id FROM webhook_deliveries d
            WHERE d.status IN ('pending', 'sending') AND d.next_attempt_at <= clock_timestamp()
            ORDER BY d.next_attempt_at
            LIMIT $1
              FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d
            SET status = 'sending', attempts = d.attempts + 1,
                next_attempt_at = clock_timestamp() + $2 * interval '1 millisecond'
           FROM due, webhook_events e, webhook_endpoints ep
          WHERE d.id = due.id AND e.id = d.event_id AND ep.id = d.endpoint_id
         RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, e.payload, ep.url, ep.secret_encrypted,
                   CASE WHEN ep.previous_secret_expires_at > clock_timestamp() THEN ep.previous_secret_encrypted END
                     AS previous_secret_encrypted`,
        [limit, leaseMs],
      )
      .then((result: [ClaimedDelivery[], number]) => result[0]);
  }

  /**
   * Writes an attempt's outcome, unless the lease was lost meanwhile (another worker's attempt counts
   * then). A success ends the endpoint's failure streak; a 410, or five days of failures, disable it.
   */
  async record(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const lease = [delivery.id, delivery.attempts];
      if (outcome.kind === 'delivered') {
        const [, mine]: [unknown[], number] = await manager.query(
          `UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL, response_status = $3,
                  response_body = $4, last_error = NULL, last_attempt_at = clock_timestamp(), delivered_at = clock_timestamp()
            WHERE id = $1 AND attempts = $2 AND status = 'sending'`,
          [...lease, outcome.status, outcome.body],
        );
        if (mine > 0)
          await manager.query(
            'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
            [delivery.endpoint_id],
          );
        return;
      }
      const [, mine]: [unknown[], number] = await manager.query(
        `UPDATE webhook_deliveries SET
           status = CASE WHEN $5::int IS NULL OR $3 = 410 THEN 'failed' ELSE 'pending' END,
           next_attempt_at = CASE WHEN $5::int IS NULL OR $3 = 410 THEN NULL
                                  ELSE clock_timestamp() + $5 * interval '1 millisecond' END,
           response_status = $3, response_body = $4, last_error = $6, last_attempt_at = clock_timestamp()
         WHERE id = $1 AND attempts = $2 AND status = 'sending'`,
        [...lease, outcome.status, outcome.body, outcome.retryInMs, outcome.error.slice(0, 300)],
      );
      if (mine === 0) return;
      const reason =
        outcome.status === 410
          ? 'The endpoint answered 410 Gone.'
          : await this.failureStreak(manager, delivery.endpoint_id);
      if (reason) {
        await manager.query(
          `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = clock_timestamp()
            WHERE id = $1 AND enabled`,
          [delivery.endpoint_id, reason],
        );
        await manager.query(
          `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
                  last_error = coalesce(last_error, 'The endpoint is disabled.')
            WHERE endpoint_id = $1 AND status = 'pending'`,
          [delivery.endpoint_id],
        );
      }
    });
  }

  /** Starts the endpoint's failure streak, or says it has lasted five days (the reason to disable it). */
  private async failureStreak(
    manager: { query: (sql: string, parameters?: unknown[]) => Promise<unknown> },
    endpointId: string,
  ): Promise<string | null> {
    const rows = (await manager.query(
      `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, clock_timestamp())
        WHERE id = $1 RETURNING failing_since <= clock_timestamp() - $2 * interval '1 millisecond' AS expired`,
      [endpointId, DISABLE_AFTER_FAILING_MS],
    )) as [{ expired: boolean }[], number];
    return rows[0][0]?.expired ? 'Deliveries failed for five days.' : null;
  }

  /**
   * `api_key.expiring` for every active key that entered its 7-day or 1-day window and was not told
   * yet (a key less than a day from expiry gets the 1-day event only). The mark makes it once, however
   * many instances scan.
   */
  async recordExpiringKeys(): Promise<number> {
    const rows: unknown[] = await this.dataSource.query(
      `WITH due AS (
         SELECT k.id, k.organization_id, k.name, k.key_prefix, k.expires_at,
                CASE WHEN k.expires_at <= clock_timestamp() + interval '1 day' THEN 1 ELSE 7 END AS days
           FROM api_keys k
          WHERE k.revoked_at IS NULL AND k.replaced_by_id IS NULL
            AND k.expires_at > clock_timestamp() AND k.expires_at <= clock_timestamp() + interval '7 days'
            AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.organization_id = k.organization_id
                           AND e.enabled AND 'api_key.expiring' = ANY (e.events))
       ), marked AS (
         INSERT INTO webhook_event_marks (mark)
         SELECT 'expiring:' || id || ':' || days || ':' || extract(epoch FROM expires_at) FROM due
         ON CONFLICT DO NOTHING RETURNING mark
       )
       SELECT webhook_record_event(due.organization_id, 'api_key.expiring', jsonb_build_object(
                'key_id', due.id, 'key_prefix', due.key_prefix, 'name', due.name,
                'expires_at', to_char(due.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                'days', due.days))
         FROM due JOIN marked ON marked.mark = 'expiring:' || due.id || ':' || due.days || ':' || extract(epoch FROM due.expires_at)`,
    );
    return rows.length;
  }
}
