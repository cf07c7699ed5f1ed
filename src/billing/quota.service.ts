import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { NotFoundError, QuotaExhaustedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { creditsSpent } from '../observability/metrics.js';
import { CURRENT_PERIOD_SQL, periodBounds, toIsoSeconds } from './billing-period.js';

export interface QuotaView {
  plan: string;
  creditsTotal: number;
  creditsUsed: number;
  creditsRemaining: number;
  periodStart: Date;
  periodEnd: Date;
}

/** Credits taken for one operation; given back with `refund` if the operation then fails. */
export interface Reservation {
  eventId: string;
  operation: MeteredOperation;
  credits: number;
  periodStart: string;
  creditsRemaining: number;
  resetsAt: string;
}

export type MeteredOperation = 'query' | 'chat_message';

@Injectable()
export class QuotaService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Gives a new organization its subscription (inside the registration transaction). */
  async open(manager: EntityManager, organizationId: string): Promise<void> {
    await manager.query(
      `INSERT INTO subscriptions (organization_id, monthly_credits, period_start)
       VALUES ($1, $2, ${CURRENT_PERIOD_SQL}) ON CONFLICT DO NOTHING`,
      [organizationId, this.config.DEFAULT_MONTHLY_CREDITS],
    );
  }

  /**
   * Spends QUERY_CREDIT_COST and writes the ledger line in one statement. The UPDATE's WHERE re-checks
   * the row after waiting for its lock, so a burst of concurrent calls can never spend past the quota;
   * a stored period older than this month counts as zero used (the new month's full quota).
   */
  async spend(caller: Principal, operation: MeteredOperation, domain: string | null): Promise<Reservation> {
    const cost = this.config.QUERY_CREDIT_COST;
    const rows: { event_id: string; period_start: string; remaining: number }[] = await this.dataSource.query(
      `WITH spent AS (
         UPDATE subscriptions s
            SET credits_used = CASE WHEN s.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE s.credits_used END + $2,
                period_start = ${CURRENT_PERIOD_SQL}
          WHERE s.organization_id = $1
            AND CASE WHEN s.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE s.credits_used END + $2 <= s.monthly_credits
         RETURNING s.organization_id, s.period_start, s.monthly_credits - s.credits_used AS remaining
       ), logged AS (
         INSERT INTO usage_events (organization_id, user_id, api_key_id, key_prefix, operation, domain, credits)
         SELECT organization_id, $3, $4, $5, $6, $7, $2 FROM spent
         RETURNING id
       )
       SELECT logged.id AS event_id, spent.period_start, spent.remaining FROM spent, logged`,
      [caller.organizationId, cost, caller.userId, caller.apiKeyId, caller.keyPrefix, operation, domain],
    );
    const spent = rows[0];
    if (!spent) {
      const quota = await this.view(caller.organizationId);
      throw new QuotaExhaustedError({
        creditsTotal: quota.creditsTotal,
        creditsUsed: quota.creditsUsed,
        resetsAt: toIsoSeconds(quota.periodEnd),
      });
    }
    return {
      eventId: spent.event_id,
      operation,
      credits: cost,
      periodStart: spent.period_start,
      creditsRemaining: spent.remaining,
      resetsAt: toIsoSeconds(periodBounds(spent.period_start).end),
    };
  }

  /** The operation succeeded: the reservation stands. Counted only now, since a refund cannot un-count. */
  settle(reservation: Reservation): void {
    creditsSpent.inc({ kind: reservation.operation }, reservation.credits);
  }

  /** Undoes a reservation: the ledger line goes, and the credits come back if the period is the same. */
  async refund(reservation: Reservation): Promise<void> {
    await this.dataSource.query(
      `WITH removed AS (DELETE FROM usage_events WHERE id = $1 RETURNING organization_id, credits)
       UPDATE subscriptions s SET credits_used = GREATEST(s.credits_used - removed.credits, 0)
         FROM removed WHERE s.organization_id = removed.organization_id AND s.period_start = $2`,
      [reservation.eventId, reservation.periodStart],
    );
  }

  async view(organizationId: string): Promise<QuotaView> {
    const rows: { plan: string; monthly_credits: number; credits_used: number; period_start: string }[] =
      await this.dataSource.query(
        `SELECT plan, monthly_credits, ${CURRENT_PERIOD_SQL}::text AS period_start,
                CASE WHEN period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE credits_used END AS credits_used
           FROM subscriptions WHERE organization_id = $1`,
        [organizationId],
      );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    const { start, end } = periodBounds(row.period_start);
    return {
      plan: row.plan,
      creditsTotal: row.monthly_credits,
      creditsUsed: row.credits_used,
      creditsRemaining: Math.max(0, row.monthly_credits - row.credits_used),
      periodStart: start,
      periodEnd: end,
    };
  }

  async setMonthlyCredits(organizationId: string, monthlyCredits: number): Promise<QuotaView> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      `UPDATE subscriptions SET monthly_credits = $2 WHERE organization_id = $1`,
      [organizationId, monthlyCredits],
    );
    if (affected === 0) throw new NotFoundError();
    return this.view(organizationId);
  }
}
