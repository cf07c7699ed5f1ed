import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { NotFoundError, QuotaExhaustedError } from '../common/errors.js';
import { ScopeBatcher } from '../common/scope-batcher.js';
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

interface SpendRequest {
  eventId: string;
  caller: Principal;
  operation: MeteredOperation;
  domain: string | null;
}

@Injectable()
export class QuotaService {
  private readonly spends = new ScopeBatcher<SpendRequest, Reservation | null>((requests) => this.spendBatch(requests), {
    maxItems: 500,
    maxWeight: 500,
    weight: () => 1,
  });

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
   * Spends QUERY_CREDIT_COST and writes the ledger line. Concurrent spends of one organization go out
   * together (group commit: the subscription row is held through each commit, which serialized every
   * query of an organization behind the disk). Over quota: a QuotaExhaustedError (402).
   */
  async spend(caller: Principal, operation: MeteredOperation, domain: string | null): Promise<Reservation> {
    const reservation = await this.spends.submit(caller.organizationId, { eventId: randomUUID(), caller, operation, domain });
    if (reservation) return reservation;
    const quota = await this.view(caller.organizationId);
    throw new QuotaExhaustedError({
      creditsTotal: quota.creditsTotal,
      creditsUsed: quota.creditsUsed,
      resetsAt: toIsoSeconds(quota.periodEnd),
    });
  }

  /**
   * One organization's spends in one statement: it locks the subscription row, grants as many of the
   * requests as the quota allows, in arrival order, adds their cost, and writes their ledger lines.
   * Other instances' batches wait on the row lock and then see the new total, so nothing is ever spent
   * past the quota. A stored period older than this month counts as zero used (a new month's quota).
   * Null for each request that was not granted.
   */
  private async spendBatch(requests: SpendRequest[]): Promise<(Reservation | null)[]> {
    const cost = this.config.QUERY_CREDIT_COST;
    const column = <T>(pick: (request: SpendRequest) => T) => requests.map(pick);
    const rows: { granted: number; period_start: string; remaining: number }[] = await this.dataSource.query(
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
        requests[0].caller.organizationId,
        cost,
        requests.length,
        column((r) => r.eventId),
        column((r) => r.caller.userId),
        column((r) => r.caller.apiKeyId),
        column((r) => r.caller.keyPrefix),
        column((r) => r.operation),
        column((r) => r.domain),
      ],
    );
    const spent = rows[0];
    if (!spent) return requests.map(() => null);
    const resetsAt = toIsoSeconds(periodBounds(spent.period_start).end);
    return requests.map((request, i) =>
      i < spent.granted
        ? {
            eventId: request.eventId,
            operation: request.operation,
            credits: cost,
            periodStart: spent.period_start,
            // What was left right after this request's own spend, as if they had gone one by one.
            // (Never below zero: an admin may have lowered the quota under what was already used.)
            creditsRemaining: Math.max(0, spent.remaining + (spent.granted - 1 - i) * cost),
            resetsAt,
          }
        : null,
    );
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
