import { Injectable } from '@nestjs/common';
import { toIsoMicros } from '../common/timestamps.js';
import type { PageRequest } from '../common/pagination.js';
import { UsageRecordResponse } from './dto/billing.response.js';
import { type DailyCreditsRow, type KeyUsageRow, UsageEventsRepository } from './usage-events.repository.js';
import type { UsageFilter } from './usage-filter.js';

/** The most keys the per-key summary lists (those that spent the most), beside the JWT row. */
export const USAGE_KEYS_MAX = 1000;

@Injectable()
export class UsageService {
  constructor(private readonly usageEvents: UsageEventsRepository) {}

  /** The organization's ledger, newest first, filtered. */
  async list(
    organizationId: string,
    filter: UsageFilter,
    page: PageRequest,
  ): Promise<{ count: number; results: UsageRecordResponse[] }> {
    const [events, count] = await this.usageEvents.page(organizationId, filter, page);
    return {
      count,
      results: events.map((event) =>
        Object.assign(new UsageRecordResponse(), {
          id: event.id,
          operation: event.operation,
          credits: event.credits,
          domain: event.domain,
          user_id: event.userId,
          key_id: event.apiKeyId,
          key_prefix: event.keyPrefix,
          created_at: toIsoMicros(event.createdAt),
        }),
      ),
    };
  }

  /** Credits per UTC day of the current period, every day up to today included (zeros too). */
  daily(organizationId: string): Promise<DailyCreditsRow[]> {
    return this.usageEvents.daily(organizationId);
  }

  /** This period's requests and credits per key, and the JWT row (see UsageEventsRepository.byKey). */
  byKey(organizationId: string): Promise<KeyUsageRow[]> {
    return this.usageEvents.byKey(organizationId, USAGE_KEYS_MAX);
  }
}
