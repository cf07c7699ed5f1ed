import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { And, type FindOptionsWhere, LessThan, MoreThanOrEqual, type Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import { CURRENT_PERIOD_SQL } from './billing-period.js';
import { UsageEvent } from './usage-event.entity.js';
import type { UsageFilter } from './usage-filter.js';

export interface DailyCreditsRow {
  date: string;
  credits: number;
}

/** One credential's spending this period; the JWT row has no key (`key_id` null). */
export interface KeyUsageRow {
  key_id: string | null;
  key_prefix: string | null;
  name: string | null;
  requests: number;
  credits: number;
}

const PERIOD_START_SQL = `(${CURRENT_PERIOD_SQL})::timestamp AT TIME ZONE 'UTC'`;

/** The find conditions of a filter: only the parts given (the organization always). */
function ledgerWhere(organizationId: string, { keyId, from, to }: UsageFilter): FindOptionsWhere<UsageEvent> {
  const where: FindOptionsWhere<UsageEvent> = { organizationId };
  if (keyId) where.apiKeyId = keyId;
  if (from && to) where.createdAt = And(MoreThanOrEqual(from), LessThan(to));
  else if (from) where.createdAt = MoreThanOrEqual(from);
  else if (to) where.createdAt = LessThan(to);
  return where;
}

/** The `usage_events` ledger, read side (lines are written and removed with the spend they record). */
@Injectable()
export class UsageEventsRepository {
  constructor(@InjectRepository(UsageEvent) private readonly events: Repository<UsageEvent>) {}

  /** Newest first. A key filter uses (organization_id, api_key_id, created_at), the others (organization_id, created_at). */
  page(organizationId: string, filter: UsageFilter, page: PageRequest): Promise<[UsageEvent[], number]> {
    return this.events.findAndCount({
      // The organization always filters too: another organization's key id matches nothing.
      where: ledgerWhere(organizationId, filter),
      order: { createdAt: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
  }

  /** Credits per UTC day of the current period, every day up to today included (zeros too). */
  daily(organizationId: string): Promise<DailyCreditsRow[]> {
    // Only this period's events are read: the range on created_at uses (organization_id, created_at),
    // so a long history costs nothing here.
    return this.events.query(
      `WITH spent AS (
         SELECT (created_at AT TIME ZONE 'UTC')::date AS spent_on, SUM(credits) AS credits
           FROM usage_events
          WHERE organization_id = $1 AND created_at >= ${PERIOD_START_SQL}
          GROUP BY 1)
       SELECT day::date::text AS date, COALESCE(spent.credits, 0)::int AS credits
         FROM generate_series(${CURRENT_PERIOD_SQL}, (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS day
         LEFT JOIN spent ON spent.spent_on = day::date
        ORDER BY day`,
      [organizationId],
    );
  }

  /**
   * This period's requests and credits per key of the organization, and one row (`key_id` null) for
   * what was spent without a key (JWT). A key is listed when it spent something this period or can
   * still be used (zeros then); revoked, expired and rotated-away keys without use this period are not.
   * The JWT row is always there. At most `maxKeys` keys, those that spent the most. Most credits first;
   * on a tie the JWT row, then the newest key.
   */
  byKey(organizationId: string, maxKeys: number): Promise<KeyUsageRow[]> {
    return this.events.query(
      `WITH spent AS (
         SELECT api_key_id, count(*)::int AS requests, SUM(credits)::int AS credits
           FROM usage_events
          WHERE organization_id = $1 AND created_at >= ${PERIOD_START_SQL}
          GROUP BY api_key_id
       ), keyed AS (
         SELECT k.id AS key_id, k.key_prefix, k.name, COALESCE(s.requests, 0) AS requests,
                COALESCE(s.credits, 0) AS credits, k.created_at
           FROM api_keys k LEFT JOIN spent s ON s.api_key_id = k.id
          WHERE k.organization_id = $1
            AND (s.api_key_id IS NOT NULL
                 OR (k.revoked_at IS NULL AND (k.is_active OR k.grace_until > now())
                     AND (k.expires_at IS NULL OR k.expires_at > now())))
          ORDER BY credits DESC, requests DESC, k.created_at DESC
          LIMIT $2
       )
       SELECT key_id, key_prefix, name, requests, credits FROM (
         SELECT * FROM keyed
         UNION ALL
         SELECT NULL, NULL, NULL, COALESCE(spent.requests, 0), COALESCE(spent.credits, 0), NULL
           FROM (VALUES (1)) AS jwt LEFT JOIN spent ON spent.api_key_id IS NULL
       ) AS usage
       ORDER BY credits DESC, requests DESC, created_at DESC NULLS FIRST`,
      [organizationId, maxKeys],
    );
  }
}
