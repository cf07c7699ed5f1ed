import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import { CURRENT_PERIOD_SQL } from './billing-period.js';
import { UsageEvent } from './usage-event.entity.js';

export interface DailyCreditsRow {
  date: string;
  credits: number;
}

/** The `usage_events` ledger, read side (lines are written and removed with the spend they record). */
@Injectable()
export class UsageEventsRepository {
  constructor(@InjectRepository(UsageEvent) private readonly events: Repository<UsageEvent>) {}

  /** Newest first. */
  page(organizationId: string, page: PageRequest): Promise<[UsageEvent[], number]> {
    return this.events.findAndCount({
      where: { organizationId },
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
