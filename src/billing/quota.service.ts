import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { KeyCreditLimitExhaustedError, NotFoundError, QuotaExhaustedError } from '../common/errors.js';
import { KeyedBatcher } from '../common/keyed-batcher.js';
import type { Principal } from '../common/principal.js';
import { creditsSpent } from '../observability/metrics.js';
import { periodBounds, toIsoSeconds } from './billing-period.js';
import { type SpendOutcome, SubscriptionsRepository } from './subscriptions.repository.js';

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

export type MeteredOperation = 'query' | 'chat_message' | 'chat_completion' | 'search';

interface SpendRequest {
  eventId: string;
  credits: number;
  caller: Principal;
  operation: MeteredOperation;
  domain: string | null;
}

@Injectable()
export class QuotaService {
  private readonly spends = new KeyedBatcher<SpendRequest, Reservation | Exclude<SpendOutcome, 'granted'>>(
    (requests) => this.spendBatch(requests),
    {
      maxItems: 500,
      maxWeight: 500,
      weight: () => 1,
    },
  );

  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Gives a new organization its subscription (inside the registration transaction). */
  async open(manager: EntityManager, organizationId: string): Promise<void> {
    await this.subscriptions.open(manager, organizationId, this.config.DEFAULT_MONTHLY_CREDITS);
  }

  /** What one operation costs: SEARCH_CREDIT_COST for a search, QUERY_CREDIT_COST for the rest. */
  cost(operation: MeteredOperation): number {
    return operation === 'search' ? this.config.SEARCH_CREDIT_COST : this.config.QUERY_CREDIT_COST;
  }

  /**
   * Spends the operation's cost and writes the ledger line. Concurrent spends of one organization go out
   * together (group commit: the subscription row is held through each commit, which serialized every
   * query of an organization behind the disk). Over quota: a QuotaExhaustedError (402); over the
   * calling key's monthly credit limit: a KeyCreditLimitExhaustedError (402, the key's figures).
   */
  async spend(caller: Principal, operation: MeteredOperation, domain: string | null): Promise<Reservation> {
    const credits = this.cost(operation);
    // A batch has one price, so spends of different prices queue apart (the row lock still orders them).
    const outcome = await this.spends.submit(`${caller.organizationId}:${credits}`, {
      eventId: randomUUID(),
      credits,
      caller,
      operation,
      domain,
    });
    if (typeof outcome === 'object') return outcome;
    if (outcome === 'key_limit' && caller.apiKeyId) {
      const key = await this.subscriptions.findKeyCredits(caller.apiKeyId);
      if (!key) throw NotFoundError.named('API key', caller.apiKeyId);
      throw new KeyCreditLimitExhaustedError({
        creditsTotal: key.monthly_credit_limit ?? 0,
        creditsUsed: key.credits_used,
        resetsAt: toIsoSeconds(periodBounds(key.period_start).end),
      });
    }
    const quota = await this.view(caller.organizationId);
    throw new QuotaExhaustedError({
      creditsTotal: quota.creditsTotal,
      creditsUsed: quota.creditsUsed,
      resetsAt: toIsoSeconds(quota.periodEnd),
    });
  }

  /** One organization's batch of spends at one price (see SubscriptionsRepository.spendBatch); why, for each request not granted. */
  private async spendBatch(requests: SpendRequest[]): Promise<(Reservation | Exclude<SpendOutcome, 'granted'>)[]> {
    const cost = requests[0].credits;
    const column = <T>(pick: (request: SpendRequest) => T) => requests.map(pick);
    const spent = await this.subscriptions.spendBatch({
      organizationId: requests[0].caller.organizationId,
      cost,
      eventIds: column((r) => r.eventId),
      userIds: column((r) => r.caller.userId),
      apiKeyIds: column((r) => r.caller.apiKeyId),
      keyPrefixes: column((r) => r.caller.keyPrefix),
      operations: column((r) => r.operation),
      domains: column((r) => r.domain),
    });
    if (!spent) return requests.map(() => 'quota');
    const resetsAt = toIsoSeconds(periodBounds(spent.period_start).end);
    const granted = spent.outcomes.filter((outcome) => outcome === 'granted').length;
    let rank = 0;
    return requests.map((request, i) => {
      const outcome = spent.outcomes[i];
      if (outcome !== 'granted') return outcome;
      return {
        eventId: request.eventId,
        operation: request.operation,
        credits: cost,
        periodStart: spent.period_start,
        // What was left right after this request's own spend, as if they had gone one by one.
        // (Never below zero: an admin may have lowered the quota under what was already used.)
        creditsRemaining: Math.max(0, spent.remaining + (granted - 1 - rank++) * cost),
        resetsAt,
      };
    });
  }

  /** The operation succeeded: the reservation stands. Counted only now, since a refund cannot un-count. */
  settle(reservation: Reservation): void {
    creditsSpent.inc({ kind: reservation.operation }, reservation.credits);
  }

  /** Undoes a reservation: the ledger line goes, and the credits come back if the period is the same. */
  async refund(reservation: Reservation): Promise<void> {
    await this.subscriptions.refund(reservation.eventId, reservation.periodStart);
  }

  /**
   * Undoes a reservation but for `keep` credits (what the client already received is worth): those
   * stand, with their ledger line, and the rest come back. `keep` 0 is a full refund.
   */
  async refundAllBut(reservation: Reservation, keep: number): Promise<void> {
    const kept = Math.min(keep, reservation.credits);
    if (kept <= 0) return this.refund(reservation);
    if (kept < reservation.credits)
      await this.subscriptions.refundPart(reservation.eventId, reservation.periodStart, kept);
    creditsSpent.inc({ kind: reservation.operation }, kept);
  }

  async view(organizationId: string): Promise<QuotaView> {
    const row = await this.subscriptions.find(organizationId);
    if (!row) throw NotFoundError.named('Organization', organizationId);
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
    if (!(await this.subscriptions.setMonthlyCredits(organizationId, monthlyCredits)))
      throw NotFoundError.named('Organization', organizationId);
    return this.view(organizationId);
  }
}
