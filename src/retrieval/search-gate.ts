import { Inject, Injectable } from '@nestjs/common';
import { SearchesBusyError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/** One organization's searches on this instance: how many run, and who waits for a turn. */
interface Lane {
  running: number;
  waiting: (() => void)[];
}

/** The figures the gate is configured with (a subset of AppConfig, so tests can pass their own). */
export type SearchGateLimits = Pick<
  AppConfig,
  'SEARCHES_AT_ONCE' | 'SEARCHES_PER_ORGANIZATION' | 'SEARCH_QUEUE_PER_ORGANIZATION'
>;

/**
 * Shares this instance's searches (search, query, chat, completions) fairly between organizations.
 *
 * SEARCHES_AT_ONCE searches run at once on the instance, all organizations together (each holds a
 * connection of the search pool and a core of the database while it ranks), and at most
 * SEARCHES_PER_ORGANIZATION of one organization. An organization with no search running starts one at
 * once even when those turns are all taken, on one of as many turns again kept for first searches: a
 * quiet organization's search never waits behind another's backlog (waiting for one search, as long as
 * a flooder's, was most of a quiet search's time under a flood; see docs/BENCHMARKS.md). When a turn
 * frees up, it goes to the waiting organization with the fewest searches running, the one that has
 * waited longest among equals (round robin), so an organization's backlog never holds another's next
 * search back by more than one search. Within one organization, searches run in order of arrival. Past
 * SEARCH_QUEUE_PER_ORGANIZATION waiting, a search is refused with a 429 and Retry-After (a queue
 * without end would only hold sockets and memory); a waiting search holds no connection.
 */
@Injectable()
export class SearchGate {
  private readonly lanes = new Map<string, Lane>();
  /** The lanes of organizations with searches waiting, longest-waiting first; each appears once. */
  private readonly line: Lane[] = [];
  private running = 0;

  constructor(@Inject(APP_CONFIG) private readonly limits: SearchGateLimits) {}

  async run<T>(organizationId: string, search: () => Promise<T>): Promise<T> {
    const lane = this.lanes.get(organizationId) ?? { running: 0, waiting: [] };
    this.lanes.set(organizationId, lane);
    if (lane.waiting.length === 0 && this.mayStart(lane.running)) {
      lane.running++;
      this.running++;
    } else if (lane.waiting.length < this.limits.SEARCH_QUEUE_PER_ORGANIZATION) {
      if (lane.waiting.length === 0) this.line.push(lane);
      // The turn is handed over with `running` already counted (see dispatch).
      await new Promise<void>((resolve) => lane.waiting.push(resolve));
    } else {
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
      throw new SearchesBusyError(this.limits.SEARCHES_PER_ORGANIZATION);
    }
    try {
      return await search();
    } finally {
      lane.running--;
      this.running--;
      this.dispatch();
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
    }
  }

  /**
   * A turn for an organization with `running` searches running: one of SEARCHES_AT_ONCE, or, for its
   * first (none running), one of as many again kept for first searches.
   */
  private mayStart(running: number): boolean {
    if (running >= this.limits.SEARCHES_PER_ORGANIZATION) return false;
    const turns = this.limits.SEARCHES_AT_ONCE;
    return this.running < turns || (running === 0 && this.running < 2 * turns);
  }

  /** Hands free turns to the waiting organizations with the fewest searches running, longest-waiting first. */
  private dispatch(): void {
    for (;;) {
      let chosen = -1;
      let fewest = Infinity;
      for (const [i, lane] of this.line.entries()) {
        if (lane.running < fewest) {
          chosen = i;
          fewest = lane.running;
          if (fewest === 0) break;
        }
      }
      if (chosen < 0 || !this.mayStart(fewest)) return;
      const [lane] = this.line.splice(chosen, 1);
      const next = lane.waiting.shift();
      if (!next) return; // never: a lane is in line while it has searches waiting
      lane.running++;
      this.running++;
      // Its next search waits behind every other organization's.
      if (lane.waiting.length > 0) this.line.push(lane);
      next();
    }
  }
}
