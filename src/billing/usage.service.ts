import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { toIsoMicros } from '../common/timestamps.js';
import type { PageRequest } from '../common/pagination.js';
import { CURRENT_PERIOD_SQL } from './billing-period.js';
import type { UsageRecordResponse } from './dto/billing.response.js';
import { UsageEvent } from './usage-event.entity.js';

@Injectable()
export class UsageService {
  constructor(private readonly dataSource: DataSource) {}

  /** The organization's ledger, newest first. */
  async list(organizationId: string, page: PageRequest): Promise<{ count: number; results: UsageRecordResponse[] }> {
    const [events, count] = await this.dataSource.getRepository(UsageEvent).findAndCount({
      where: { organizationId },
      order: { createdAt: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
    return {
      count,
      results: events.map((event) => ({
        id: event.id,
        operation: event.operation,
        credits: event.credits,
        domain: event.domain,
        user_id: event.userId,
        key_prefix: event.keyPrefix,
        created_at: toIsoMicros(event.createdAt),
      })),
    };
  }

  /** Credits per UTC day of the current period, every day up to today included (zeros too). */
  async daily(organizationId: string): Promise<{ date: string; credits: number }[]> {
    // Only this period's events are read: the range on created_at uses (organization_id, created_at),
    // so a long history costs nothing here.
    return this.dataSource.query(
      `WITH spent AS (
         SELECT (created_at AT TIME ZONE 'UTC')::date AS spent_on, SUM(credits) AS credits
           FROM usage_events
          WHERE organization_id = $1 AND created_at >= (${CURRENT_PERIOD_SQL})::timestamp AT TIME ZONE 'UTC'
          GROUP BY 1)
       SELECT day::date::text AS date, COALESCE(spent.credits, 0)::int AS credits
         FROM generate_series(${CURRENT_PERIOD_SQL}, (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS day
         LEFT JOIN spent ON spent.spent_on = day::date
        ORDER BY day`,
      [organizationId],
    );
  }
}
