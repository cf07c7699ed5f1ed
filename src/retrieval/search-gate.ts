import { Inject, Injectable } from '@nestjs/common';
import { SearchesBusyError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/** One organization's searches on this instance: how many run, and who waits for a turn. */
interface Lane {
  running: number;
  waiting: (() => void)[];
}

/**
 * Bounds what one organization holds of the database at once: at most SEARCHES_PER_ORGANIZATION of
 * its searches run at a time on this instance (each holds a connection and a core while it ranks), so
 * one tenant flooding costly searches cannot take the pool or the CPU from the others. The next ones
 * wait their turn in order of arrival; past SEARCH_QUEUE_PER_ORGANIZATION waiting, a search is refused
 * with a 429 and Retry-After (a queue without end would only hold sockets and memory).
 */
@Injectable()
export class SearchGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async run<T>(organizationId: string, search: () => Promise<T>): Promise<T> {
    const lane = this.lanes.get(organizationId) ?? { running: 0, waiting: [] };
    this.lanes.set(organizationId, lane);
    if (lane.running < this.config.SEARCHES_PER_ORGANIZATION) lane.running++;
    else if (lane.waiting.length < this.config.SEARCH_QUEUE_PER_ORGANIZATION)
      await new Promise<void>((resolve) => lane.waiting.push(resolve));
    else throw new SearchesBusyError(this.config.SEARCHES_PER_ORGANIZATION);
    try {
      return await search();
    } finally {
      // Hand the turn straight to the next in line (running stays the same), or free it.
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.running === 0) this.lanes.delete(organizationId);
    }
  }
}
