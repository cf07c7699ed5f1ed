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

/** How many requests of a batch were granted, the period they were counted in, and what is left after all of them. */
export interface SpendBatchRow {
  granted: number;
  period_start: string;
  remaining: number;
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
   * One organization's spends in one statement: it locks the subscription row, grants as many of the
   * requests as the quota allows, in arrival order, adds their cost, and writes their ledger lines.
   * Other instances' batches wait on the row lock and then see the new total, so nothing is ever spent
   * past the quota. A stored period older than this month counts as zero used (a new month's quota).
   * No row when the organization has no subscription.
   */
  async spendBatch(batch: SpendBatchInput): Promise<SpendBatchRow | undefined> {
    const rows: SpendBatchRow[] = await this.dataSource.query(
      `WITH locked AS (
         SELECT s.organization_id, s.monthly_credits, ${CURRENT_PERIOD_SQL} AS period,
                CASE WHEN s.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE s.credits_used END AS used
           FROM subscriptions s WHERE s.organization_id = $1 FOR UPDATE
       ), plan AS (
         SELECT locked.*, CASE WHEN $2::int = 0 THEN $3::int
                               ELSE LEAST($3::int, GREATEST(0, (monthly_credits - used) / $2::int)) END AS granted
           FROM locked
       ), spent AS (
         UPDATE subscriptions s SET credits_used = plan.used + plan.granted * $2::int, period_start = plan.period
           FROM plan WHERE s.organization_id = plan.organization_id
         RETURNING plan.granted, s.period_start, s.monthly_credits - s.credits_used AS remaining
       ), logged AS (
         INSERT INTO usage_events (id, organization_id, user_id, api_key_id, key_prefix, operation, domain, credits)
         SELECT r.id, $1, r.user_id, r.api_key_id, r.key_prefix, r.operation, r.domain, $2::int
           FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::text[])
                WITH ORDINALITY AS r(id, user_id, api_key_id, key_prefix, operation, domain, n)
           JOIN spent ON r.n <= spent.granted
       )
       SELECT granted, period_start, remaining FROM spent`,
      [
        batch.organizationId,
        batch.cost,
        batch.eventIds.length,
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

  /** The ledger line goes, and its credits come back if the subscription is still in that period. */
  async refund(eventId: string, periodStart: string): Promise<void> {
    await this.dataSource.query(
      `WITH removed AS (DELETE FROM usage_events WHERE id = $1 RETURNING organization_id, credits)
       UPDATE subscriptions s SET credits_used = GREATEST(s.credits_used - removed.credits, 0)
         FROM removed WHERE s.organization_id = removed.organization_id AND s.period_start = $2`,
      [eventId, periodStart],
    );
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
