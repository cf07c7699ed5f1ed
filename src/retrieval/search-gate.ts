import { Inject, Injectable } from '@nestjs/common';
import { SearchesBusyError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/** One organization's searches on this instance: how many run, and who waits for a turn. */
interface Lane {
  organizationId: string;
  running: number;
  waiting: (() => void)[];
  /** Date.now() before which its next search may not start (paced while others are active). */
  restsUntil: number;
}

/** The figures the gate is configured with (a subset of AppConfig, so tests can pass their own). */
export type SearchGateLimits = Pick<
  AppConfig,
  'SEARCHES_AT_ONCE' | 'SEARCHES_PER_ORGANIZATION' | 'SEARCH_QUEUE_PER_ORGANIZATION' | 'SEARCH_TURN_SHARE_PERCENT'
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
 *
 * While another organization is active on the instance (it has searches running or waiting, or sent
 * any request in the last ACTIVE_MS: `noteActivity`), one organization runs at most SEARCHES_AT_ONCE − 1
 * searches (at least 1): a database core is left for everyone else's reads and searches, and the
 * flood's requests take less of the service's CPU (docs/BENCHMARKS.md, *A core left for the others*:
 * it does not make up for a machine whose other work takes every core). And while an organization
 * whose searches do not queue is active (a light one), an organization whose searches queue back to
 * back holds its turn SEARCH_TURN_SHARE_PERCENT of the time (`pace`): each of its searches is followed
 * by a rest, so that its requests leave the service's main thread and the database cores to the light
 * one's requests (which never rest: their searches do not queue).
 * Alone, an organization keeps all SEARCHES_AT_ONCE turns and never rests.
 */
@Injectable()
export class SearchGate {
  private readonly lanes = new Map<string, Lane>();
  /** The lanes of organizations with searches waiting, longest-waiting first; each appears once. */
  private readonly line: Lane[] = [];
  private running = 0;
  /** When each organization last sent a request to this instance (Date.now()); stale ones pruned each ACTIVE_MS. */
  private readonly lastSeen = new Map<string, number>();
  private prunedAt = 0;
  /** The timer that dispatches when the soonest rest ends, and when that is (Infinity: none). */
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;

  constructor(@Inject(APP_CONFIG) private readonly limits: SearchGateLimits) {}

  /** An organization's request (any route, request-pipeline.ts): it counts as active for ACTIVE_MS. */
  noteActivity(organizationId: string): void {
    const now = Date.now();
    this.lastSeen.set(organizationId, now);
    if (now - this.prunedAt < ACTIVE_MS) return;
    this.prunedAt = now;
    for (const [other, seen] of this.lastSeen) if (seen < now - ACTIVE_MS) this.lastSeen.delete(other);
  }

  async run<T>(organizationId: string, search: () => Promise<T>): Promise<T> {
    const lane = this.lanes.get(organizationId) ?? { organizationId, running: 0, waiting: [], restsUntil: 0 };
    this.lanes.set(organizationId, lane);
    this.noteActivity(organizationId);
    if (lane.waiting.length === 0 && this.mayStart(lane)) {
      lane.running++;
      this.running++;
    } else if (lane.waiting.length < this.limits.SEARCH_QUEUE_PER_ORGANIZATION) {
      if (lane.waiting.length === 0) this.line.push(lane);
      // The turn is handed over with `running` already counted (see dispatch).
      const turn = new Promise<void>((resolve) => lane.waiting.push(resolve));
      this.wakeAfterRests();
      await turn;
    } else {
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
      throw new SearchesBusyError(this.limits.SEARCHES_PER_ORGANIZATION);
    }
    const started = Date.now();
    try {
      return await search();
    } finally {
      lane.running--;
      this.running--;
      if (lane.waiting.length > 0) this.pace(lane, started);
      this.dispatch();
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
    }
  }

  /**
   * A turn for `lane`'s organization: one of SEARCHES_AT_ONCE (of SEARCHES_AT_ONCE − 1 while another
   * organization is active), or, for its first (none running), one of as many again kept for first
   * searches.
   */
  private mayStart(lane: Lane): boolean {
    const { running } = lane;
    if (running >= this.limits.SEARCHES_PER_ORGANIZATION) return false;
    if (lane.restsUntil > Date.now()) return false;
    const turns = this.limits.SEARCHES_AT_ONCE;
    if (running === 0) return this.running < 2 * turns;
    return this.running < turns && (running < turns - 1 || !this.othersActive(lane.organizationId));
  }

  /** Whether an organization other than this one has searches running or waiting, or a recent request. */
  private othersActive(organizationId: string): boolean {
    for (const other of this.lanes.keys()) if (other !== organizationId) return true;
    const since = Date.now() - ACTIVE_MS;
    for (const [other, seen] of this.lastSeen) if (other !== organizationId && seen >= since) return true;
    return false;
  }

  /**
   * Whether an organization other than this one sent a request in the last ACTIVE_MS and has no
   * search waiting: one whose latency a flooder's searches would cost. Flooders among themselves
   * share the turns without resting (a rest would leave cores idle that none of them needs kept).
   */
  private lightOthersActive(organizationId: string): boolean {
    const since = Date.now() - ACTIVE_MS;
    for (const [other, seen] of this.lastSeen)
      if (other !== organizationId && seen >= since && !this.lanes.get(other)?.waiting.length) return true;
    return false;
  }

  /**
   * A search of `lane`'s organization ended with more of its own waiting: while a light organization
   * is active, its next starts after a rest, so that it holds a turn SEARCH_TURN_SHARE_PERCENT of the
   * time. A share of a turn is not enough on its own: each search of a flooder also costs the service's
   * main thread and the database's backend their share of the machine's cores (docs/BENCHMARKS.md).
   */
  private pace(lane: Lane, startedAt: number): void {
    const share = this.limits.SEARCH_TURN_SHARE_PERCENT;
    if (share >= 100 || !this.lightOthersActive(lane.organizationId)) return;
    const now = Date.now();
    lane.restsUntil = Math.max(lane.restsUntil, now + ((now - startedAt) * (100 - share)) / share);
  }

  /** Dispatches again when the first rest of a waiting organization ends (one timer for all). */
  private wakeAfterRests(): void {
    const now = Date.now();
    let soonest = Infinity;
    for (const lane of this.line) if (lane.restsUntil > now) soonest = Math.min(soonest, lane.restsUntil);
    if (soonest >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = soonest;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.dispatch();
    }, Math.ceil(soonest - now));
    this.wakeTimer.unref();
  }

  /** Hands free turns to the waiting organizations with the fewest searches running, longest-waiting first. */
  private dispatch(): void {
    for (;;) {
      let chosen = -1;
      let fewest = Infinity;
      for (const [i, lane] of this.line.entries()) {
        if (lane.running < fewest && this.mayStart(lane)) {
          chosen = i;
          fewest = lane.running;
          if (fewest === 0) break;
        }
      }
      if (chosen < 0) return this.wakeAfterRests();
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

/**
 * How long an organization counts as active after its last request: longer than the gaps between a
 * reading client's requests, short enough that a flooder alone soon has all the turns back.
 */
export const ACTIVE_MS = 1000;
