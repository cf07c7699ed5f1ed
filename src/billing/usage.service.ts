import { Injectable } from '@nestjs/common';
import { toIsoMicros } from '../common/timestamps.js';
import type { PageRequest } from '../common/pagination.js';
import type { UsageRecordResponse } from './dto/billing.response.js';
import { type DailyCreditsRow, UsageEventsRepository } from './usage-events.repository.js';

@Injectable()
export class UsageService {
  constructor(private readonly usageEvents: UsageEventsRepository) {}

  /** The organization's ledger, newest first. */
  async list(organizationId: string, page: PageRequest): Promise<{ count: number; results: UsageRecordResponse[] }> {
    const [events, count] = await this.usageEvents.page(organizationId, page);
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
  daily(organizationId: string): Promise<DailyCreditsRow[]> {
    return this.usageEvents.daily(organizationId);
  }
}
