import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { CURRENT_PERIOD_SQL } from './billing-period.js';

/** What one organization's batch of spends asked for; the ledger lines are written in request order. */
export interface SpendBatchInput {
  organizationId: string;
  cost: number;
  eventIds: string[];
  userIds: string[];
  apiKeyIds: (string | null)[];
  keyPrefixes: (string | null)[];
  operations: string[];
  domains: (string | null)[];
}

/** Why a request of a batch was refused: the organization's quota, or its key's monthly credit limit. */
export type SpendOutcome = 'granted' | 'quota' | 'key_limit';

/** Each request's outcome (in request order), the period they were counted in, and what is left after all of them. */
export interface SpendBatchRow {
  outcomes: SpendOutcome[];
  period_start: string;
  remaining: number;
}

/** A key's monthly credit limit and what it spent in the current period. */
export interface KeyCreditsRow {
  monthly_credit_limit: number | null;
  credits_used: number;
  period_start: string;
}

export interface SubscriptionRow {
  plan: string;
  monthly_credits: number;
  credits_used: number;
  period_start: string;
}

/** The `subscriptions` table: each organization's monthly credit quota, spent and refunded here. */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inside the registration transaction; a second call for one organization changes nothing. */
  async open(manager: EntityManager, organizationId: string, monthlyCredits: number): Promise<void> {
    await manager.query(
      `INSERT INTO subscriptions (organization_id, monthly_credits, period_start)
       VALUES ($1, $2, ${CURRENT_PERIOD_SQL}) ON CONFLICT DO NOTHING`,
      [organizationId, monthlyCredits],
    );
  }

  /**
   * One organization's spends in one statement: it locks the subscription row, grants the requests in
   * arrival order as far as both the quota and each key's `monthly_credit_limit` allow, adds their cost
   * to the organization and to each key, and writes their ledger lines. Other instances' batches wait
   * on the subscription row and then see the new totals, so nothing is ever spent past the quota or a
   * key's cap. A stored period older than this month counts as zero used (a new month). No row when
   * the organization has no subscription.
   */
  async spendBatch(batch: SpendBatchInput): Promise<SpendBatchRow | undefined> {
    const rows: SpendBatchRow[] = await this.dataSource.query(
      `WITH locked AS (
         -- The period never goes back: a statement that began before midnight UTC (now() is its start)
         -- but got the row after a spend of the new month spends in the new month too, instead of
         -- writing the old period back over it.
         SELECT s.organization_id, s.monthly_credits, GREATEST(s.period_start, ${CURRENT_PERIOD_SQL}) AS period,
                CASE WHEN s.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE s.credits_used END AS used
           FROM subscriptions s WHERE s.organization_id = $1 FOR UPDATE
       ), key_counters AS (
         -- One counter per key lineage (a key and the keys that replaced it by rotation: an old key in
         -- its grace period and its successor spend from one cap, the lineage's newest key's). Locked
         -- behind the subscription row, where every spend of the organization queues first; FOR UPDATE
         -- reads the latest count (every lineage has its counter row from its first key's creation).
         SELECT c.api_key_id AS lineage_id,
                (SELECT h.monthly_credit_limit FROM api_keys h WHERE h.lineage_id = c.api_key_id
                  ORDER BY h.created_at DESC LIMIT 1) AS cap,
                CASE WHEN c.period_start < locked.period THEN 0 ELSE c.credits_used END AS used
           FROM locked, api_key_credits c
          WHERE c.api_key_id IN (SELECT lineage_id FROM api_keys WHERE id = ANY($5::uuid[]))
            FOR UPDATE OF c
       ), requests AS (
         SELECT r.*, k.lineage_id, kc.cap, kc.used AS key_used
           FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[])
                WITH ORDINALITY AS r(id, user_id, api_key_id, key_prefix, operation, domain, n)
           LEFT JOIN api_keys k ON k.id = r.api_key_id
           LEFT JOIN key_counters kc ON kc.lineage_id = k.lineage_id
       ), within_key AS (
         -- Each lineage's first requests, as many as its cap allows. Exact in arrival order: a request
         -- the quota refuses means the quota refuses every later one too.
         SELECT requests.*,
                $2::int = 0 OR cap IS NULL
                  OR key_used + $2::int * row_number() OVER (PARTITION BY lineage_id ORDER BY n) <= cap AS key_ok
           FROM requests
       ), decided AS (
         SELECT w.*, w.key_ok AND ($2::int = 0 OR locked.used + $2::int
                  * count(*) FILTER (WHERE w.key_ok) OVER (ORDER BY w.n) <= locked.monthly_credits) AS granted
           FROM within_key w, locked
       ), spent AS (
         UPDATE subscriptions s
            SET credits_used = locked.used + (SELECT count(*) FROM decided WHERE granted)::int * $2::int,
                period_start = locked.period
           FROM locked WHERE s.organization_id = locked.organization_id
         RETURNING s.period_start, s.monthly_credits - s.credits_used AS remaining
       ), key_spent AS (
         UPDATE api_key_credits c SET credits_used = kc.used + g.n * $2::int, period_start = locked.period
           FROM locked, key_counters kc,
                (SELECT lineage_id, count(*)::int AS n FROM decided WHERE granted GROUP BY lineage_id) g
          WHERE c.api_key_id = kc.lineage_id AND g.lineage_id = kc.lineage_id
       ), logged AS (
         INSERT INTO usage_events (id, organization_id, user_id, api_key_id, key_prefix, operation, domain, credits)
         SELECT id, $1, user_id, api_key_id, key_prefix, operation, domain, $2::int FROM decided WHERE granted
       )
       SELECT spent.period_start, spent.remaining,
              (SELECT array_agg(CASE WHEN granted THEN 'granted' WHEN NOT key_ok THEN 'key_limit' ELSE 'quota' END
                                ORDER BY n) FROM decided) AS outcomes
         FROM spent`,
      [
        batch.organizationId,
        batch.cost,
        batch.eventIds,
        batch.userIds,
        batch.apiKeyIds,
        batch.keyPrefixes,
        batch.operations,
        batch.domains,
      ],
    );
    return rows[0];
  }

  /** The ledger line goes, and its credits come back to the organization and to its key's lineage if the period is the same. */
  async refund(eventId: string, periodStart: string): Promise<void> {
    // The key's counter is changed after the subscription row, in the order a spend locks them.
    await this.dataSource.query(
      `WITH removed AS (DELETE FROM usage_events WHERE id = $1 RETURNING organization_id, api_key_id, credits),
       organization AS (
         UPDATE subscriptions s SET credits_used = GREATEST(s.credits_used - removed.credits, 0)
           FROM removed WHERE s.organization_id = removed.organization_id AND s.period_start = $2
         RETURNING removed.api_key_id, removed.credits
       )
       UPDATE api_key_credits c SET credits_used = GREATEST(c.credits_used - organization.credits, 0)
         FROM organization JOIN api_keys k ON k.id = organization.api_key_id
        WHERE c.api_key_id = k.lineage_id AND c.period_start = $2`,
      [eventId, periodStart],
    );
  }

  /**
   * Gives back all of a ledger line's credits but `keep`: the line stays with `keep` credits, and the
   * rest returns to the organization and to its key if the period is the same (as `refund` does).
   */
  async refundPart(eventId: string, periodStart: string, keep: number): Promise<void> {
    await this.dataSource.query(
      `WITH line AS (SELECT id, credits FROM usage_events WHERE id = $1 AND credits > $3 FOR UPDATE),
       shrunk AS (
         UPDATE usage_events u SET credits = $3 FROM line WHERE u.id = line.id
         RETURNING u.organization_id, u.api_key_id, line.credits - $3 AS credits
       ),
       organization AS (
         UPDATE subscriptions s SET credits_used = GREATEST(s.credits_used - shrunk.credits, 0)
           FROM shrunk WHERE s.organization_id = shrunk.organization_id AND s.period_start = $2
         RETURNING shrunk.api_key_id, shrunk.credits
       )
       UPDATE api_key_credits c SET credits_used = GREATEST(c.credits_used - organization.credits, 0)
         FROM organization JOIN api_keys k ON k.id = organization.api_key_id
        WHERE c.api_key_id = k.lineage_id AND c.period_start = $2`,
      [eventId, periodStart, keep],
    );
  }

  /** A key's cap and this period's spend, its lineage's (after a refusal, for the 402's figures). */
  async findKeyCredits(keyId: string): Promise<KeyCreditsRow | undefined> {
    const rows: KeyCreditsRow[] = await this.dataSource.query(
      `SELECT (SELECT h.monthly_credit_limit FROM api_keys h WHERE h.lineage_id = k.lineage_id
                ORDER BY h.created_at DESC LIMIT 1) AS monthly_credit_limit,
              ${CURRENT_PERIOD_SQL}::text AS period_start,
              CASE WHEN c.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE c.credits_used END AS credits_used
         FROM api_keys k JOIN api_key_credits c ON c.api_key_id = k.lineage_id WHERE k.id = $1`,
      [keyId],
    );
    return rows[0];
  }

  /** As of this month: a stored period older than this one counts as nothing used. */
  async find(organizationId: string): Promise<SubscriptionRow | undefined> {
    const rows: SubscriptionRow[] = await this.dataSource.query(
      `SELECT plan, monthly_credits, ${CURRENT_PERIOD_SQL}::text AS period_start,
              CASE WHEN period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE credits_used END AS credits_used
         FROM subscriptions WHERE organization_id = $1`,
      [organizationId],
    );
    return rows[0];
  }

  /** False when the organization has no subscription. */
  async setMonthlyCredits(organizationId: string, monthlyCredits: number): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      `UPDATE subscriptions SET monthly_credits = $2 WHERE organization_id = $1`,
      [organizationId, monthlyCredits],
    );
    return affected > 0;
  }
}
