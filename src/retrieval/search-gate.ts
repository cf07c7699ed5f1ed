import { Inject, Injectable } from '@nestjs/common';
import { SearchesBusyError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/** One organization's searches on this instance: how many run, and who waits for a turn. */
interface Lane {
  organizationId: string;
  running: number;
  /** Each waiting search's start, told whether its turn counts as a heavy organization's (`heavyRunning`). */
  waiting: ((heavy: boolean) => void)[];
}

/** The figures the gate is configured with (a subset of AppConfig, so tests can pass their own). */
export type SearchGateLimits = Pick<
  AppConfig,
  | 'SEARCHES_AT_ONCE'
  | 'SEARCHES_PER_ORGANIZATION'
  | 'SEARCH_QUEUE_PER_ORGANIZATION'
  | 'SEARCH_QUEUE_TOTAL'
  | 'SEARCH_TURN_SHARE_PERCENT'
  | 'SEARCH_REST_ALLOWANCE_MS'
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
 * it does not make up for a machine whose other work takes every core). And each search is charged to
 * its organization as a rest owed (`charge`), so that one holding turns more than
 * SEARCH_TURN_SHARE_PERCENT of the time (back to back, from one connection or many) waits out its rest
 * before its next search while a light organization (one that owes none) is active (all but
 * SEARCH_REST_ALLOWANCE_MS of it until it is heavy, so that one slow search does not hold back a
 * light organization's next; a flooder's owed rest passes it once it has held turns for
 * allowance × share / (100 − share) ms, 62 at 20): a flooder's
 * requests then leave the service's main thread and the database cores to the light one's. Several
 * such heavy organizations (`noteArrival`) rest as one: while a light organization is active they run one
 * search at a time between them, each search is charged to a rest they share as well as to its own,
 * and the turns kept for first searches are left to the light ones, so that together they hold a turn
 * at most SEARCH_TURN_SHARE_PERCENT of the time (six flooding organizations otherwise took both cores,
 * each within its own share, and a quiet organization's search waited behind their first searches).
 * Alone, an organization keeps all SEARCHES_AT_ONCE turns and never rests.
 */
@Injectable()
export class SearchGate {
  private readonly lanes = new Map<string, Lane>();
  /** The lanes of organizations with searches waiting, longest-waiting first; each appears once. */
  private readonly line: Lane[] = [];
  private running = 0;
  /** Searches waiting for a turn, all organizations together (at most SEARCH_QUEUE_TOTAL, see `mayWait`). */
  private waitingTotal = 0;
  /** When each organization last sent a request to this instance (now()); stale ones pruned each ACTIVE_MS. */
  private readonly lastSeen = new Map<string, number>();
  private prunedAt = 0;
  /** The rest each organization owes for turns held beyond SEARCH_TURN_SHARE_PERCENT (see `charge`). */
  private readonly owed = new Map<string, Rest>();
  /** Until when each organization made heavy (see noteArrival) counts as heavy, besides while it has searches. */
  private readonly heavyUntil = new Map<string, number>();
  /** Each organization's searches in a row held for its own rest on arrival, and when the last was counted. */
  private readonly holds = new Map<string, { count: number; at: number }>();
  /** Organizations whose last search arrived owing no rest after an earlier one of theirs: within their share. */
  private readonly paced = new Set<string>();
  /** The rest the heavy organizations owe together, and how many of their searches run (see `charge`). */
  private heavyOwed: Rest = { ms: 0, at: 0 };
  private heavyRunning = 0;
  /** The timer that dispatches when the soonest rest ends, and when that is (Infinity: none). */
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;

  constructor(@Inject(APP_CONFIG) private readonly limits: SearchGateLimits) {}

  /** An organization's request (any route, request-pipeline.ts): it counts as active for ACTIVE_MS. */
  noteActivity(organizationId: string): void {
    const at = now();
    this.lastSeen.set(organizationId, at);
    if (at - this.prunedAt < ACTIVE_MS) return;
    this.prunedAt = at;
    for (const [other, seen] of this.lastSeen)
      if (seen < at - ACTIVE_MS) {
        this.lastSeen.delete(other);
        this.paced.delete(other);
      }
    // A spent rest is kept while its organization is active: it tells `paced` that a search came before.
    for (const other of this.owed.keys())
      if (this.owedMs(other, at) === 0 && !this.lastSeen.has(other)) this.owed.delete(other);
    for (const [other, until] of this.heavyUntil)
      if (until <= at && !this.lanes.has(other)) this.heavyUntil.delete(other);
    for (const [other, holds] of this.holds)
      if (holds.at < at - ACTIVE_MS - MAX_REST_MS && !this.lanes.has(other)) this.holds.delete(other);
  }

  /**
   * Runs `search` on a turn of the organization's. A search still waiting when `signal` aborts (its
   * client went) leaves the line and rejects with the signal's reason: it never runs.
   */
  async run<T>(organizationId: string, search: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const lane = this.lanes.get(organizationId) ?? { organizationId, running: 0, waiting: [] };
    this.lanes.set(organizationId, lane);
    this.noteActivity(organizationId);
    const at = now();
    this.noteArrival(organizationId, at);
    let heavy: boolean;
    if (lane.waiting.length === 0 && this.mayStart(lane, at)) {
      heavy = this.take(lane, at);
    } else if (this.mayWait(lane)) {
      heavy = await this.turn(lane, at, signal);
    } else {
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
      throw new SearchesBusyError(this.limits.SEARCHES_PER_ORGANIZATION);
    }
    const startedAt = now();
    const owedAtStart = this.owedMs(organizationId, startedAt);
    try {
      return await search();
    } finally {
      lane.running--;
      this.running--;
      if (heavy) this.heavyRunning--;
      this.charge(organizationId, startedAt, owedAtStart, heavy);
      this.dispatch();
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(organizationId);
    }
  }

  /**
   * Whether a search may wait for a turn: SEARCH_QUEUE_PER_ORGANIZATION of one organization, and
   * SEARCH_QUEUE_TOTAL of all (each holds its request, body included, in memory: several organizations'
   * full queues of 26 KB filters took the instance past 700 MB). An organization with none waiting may
   * always wait with one: another's backlog never refuses a quiet organization's search.
   */
  private mayWait(lane: Lane): boolean {
    if (lane.waiting.length >= this.limits.SEARCH_QUEUE_PER_ORGANIZATION) return false;
    return lane.waiting.length === 0 || this.waitingTotal < this.limits.SEARCH_QUEUE_TOTAL;
  }

  /** Counts a turn given to `lane`'s organization; whether it counts as a heavy organization's. */
  private take(lane: Lane, at: number): boolean {
    lane.running++;
    this.running++;
    const heavy = this.held(lane.organizationId, at);
    if (heavy) this.heavyRunning++;
    return heavy;
  }

  /** Waits in line for a turn, handed over already counted (see dispatch), and whether it is a heavy one. */
  private turn(lane: Lane, at: number, signal?: AbortSignal): Promise<boolean> {
    if (lane.waiting.length === 0) this.line.push(lane);
    this.waitingTotal++;
    return new Promise<boolean>((resolve, reject) => {
      const start = (heavy: boolean) => {
        this.waitingTotal--;
        signal?.removeEventListener('abort', leave);
        resolve(heavy);
      };
      const leave = () => {
        this.waitingTotal--;
        lane.waiting.splice(lane.waiting.indexOf(start), 1);
        if (lane.waiting.length === 0) this.line.splice(this.line.indexOf(lane), 1);
        if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(lane.organizationId);
        reject(signal?.reason instanceof Error ? signal.reason : new DOMException('The client went.', 'AbortError'));
      };
      lane.waiting.push(start);
      signal?.addEventListener('abort', leave, { once: true });
      // With the same clock reading as the refusal: a rest found owed is found owed here too.
      this.wakeAfterRests(at);
    });
  }

  /**
   * A turn for `lane`'s organization: one of SEARCHES_AT_ONCE (of SEARCHES_AT_ONCE − 1 while another
   * organization is active), or, for its first (none running), one of as many again kept for first
   * searches unless it is heavy; none while it must rest (`restMs`), nor, heavy, while another heavy
   * organization's search runs and a light organization is active.
   */
  private mayStart(lane: Lane, at: number): boolean {
    const { running, organizationId } = lane;
    if (running >= this.limits.SEARCHES_PER_ORGANIZATION) return false;
    if (this.restMs(organizationId, at) > 0) return false;
    if (this.heavyRunning > 0 && this.held(organizationId, at) && this.lightActive(organizationId, at)) return false;
    const turns = this.limits.SEARCHES_AT_ONCE;
    // The turns kept for first searches are a light organization's: N flooders, each with none running
    // between two of its searches, took them all and a reader's search waited behind theirs.
    if (running === 0) return this.running < (this.held(organizationId, at) ? turns : 2 * turns);
    return this.running < turns && (running < turns - 1 || !this.othersActive(lane.organizationId, at));
  }

  /** Whether an organization other than this one has searches running or waiting, or a recent request. */
  private othersActive(organizationId: string, at: number): boolean {
    for (const other of this.lanes.keys()) if (other !== organizationId) return true;
    const since = at - ACTIVE_MS;
    for (const [other, seen] of this.lastSeen) if (other !== organizationId && seen >= since) return true;
    return false;
  }

  /**
   * Every search is charged to its organization as a rest owed: d × (100 − share) / share ms for a
   * search that took d ms, less the time since (a rest is served by waiting, whether or not a search
   * waits), at most MAX_REST_MS. A rest is served only between searches: what of `owedAtStart` the
   * search's own time served is charged again (else, within SEARCH_REST_ALLOWANCE_MS, a flooder from
   * one connection would owe no more after each search than before it, at a share of 50 or more). An
   * organization that holds turns at most SEARCH_TURN_SHARE_PERCENT of the time therefore owes
   * nothing by the time of its next search; one whose searches follow each
   * other back to back (one connection or many) owes ever more, up to the cap. A search that started
   * as a heavy organization's (`take`) is charged to the heavy organizations' shared rest too, while a
   * light organization is active.
   */
  private charge(organizationId: string, startedAt: number, owedAtStart: number, heavy: boolean): void {
    const share = this.limits.SEARCH_TURN_SHARE_PERCENT;
    if (share >= 100) return;
    const at = now();
    const rest = ((at - startedAt) * (100 - share)) / share + Math.min(owedAtStart, at - startedAt);
    this.owed.set(organizationId, restPlus(this.owed.get(organizationId), rest, at));
    if (heavy && this.lightActive(organizationId, at)) this.heavyOwed = restPlus(this.heavyOwed, rest, at);
  }

  private owedMs(organizationId: string, at: number): number {
    return restLeft(this.owed.get(organizationId), at);
  }

  /**
   * The part of its own rest owed that an organization must wait out: all of it once heavy, else what
   * exceeds SEARCH_REST_ALLOWANCE_MS. A reader whose search was slowed by a neighbour's owes more than
   * the gap to its next, but far less than a flooder, whose owed rest climbs with every search.
   */
  private ownRestMs(organizationId: string, at: number): number {
    const owed = this.owedMs(organizationId, at);
    return this.held(organizationId, at) ? owed : Math.max(0, owed - this.limits.SEARCH_REST_ALLOWANCE_MS);
  }

  /**
   * Counts a search arriving while its organization owes a rest of its own that it must wait out (a
   * light organization is active): HOLDS_TO_BE_HEAVY such searches in a row, each after one of the
   * organization's searches ended, make it heavy (`held`). A flooder's every search arrives so, however
   * long its searches take or however many connections it uses; a reader's search that arrives owing
   * nothing ends the row, and a burst of several at once counts once. A heavy organization's every
   * search that owes any rest counts (it waits all of it, see `ownRestMs`), so that it stays heavy
   * while its rest is shorter than SEARCH_REST_ALLOWANCE_MS. One that arrives owing nothing after an
   * earlier search has shown it paces itself (`paced`) until one must wait: a reader whose search
   * was slowed, owing less than the allowance, stays light.
   */
  private noteArrival(organizationId: string, at: number): void {
    const mustWait = this.ownRestMs(organizationId, at) > 0;
    if (mustWait) this.paced.delete(organizationId);
    else if (this.owedMs(organizationId, at) === 0 && this.owed.has(organizationId)) this.paced.add(organizationId);
    if (!mustWait || !this.lightActive(organizationId, at)) {
      this.holds.delete(organizationId);
      return;
    }
    const holds = this.holds.get(organizationId) ?? { count: 0, at: -Infinity };
    // Counted once per search ended: the last charge (`owed`) is later than the last hold counted.
    if ((this.owed.get(organizationId)?.at ?? -Infinity) <= holds.at) return;
    this.holds.set(organizationId, { count: holds.count + 1, at });
    if (holds.count + 1 >= HOLDS_TO_BE_HEAVY) this.heavyUntil.set(organizationId, at + ACTIVE_MS);
  }

  /**
   * Whether the organization was made heavy (noteArrival): while it has searches running or waiting,
   * and for ACTIVE_MS after the hold that made it so, however long its searches take.
   */
  private held(organizationId: string, at: number): boolean {
    const until = this.heavyUntil.get(organizationId);
    return until !== undefined && (until > at || this.lanes.has(organizationId));
  }

  /**
   * How long the organization must still rest before its next search (0: none), while a light
   * organization is active: what of its own rest exceeds SEARCH_REST_ALLOWANCE_MS (all of it once
   * heavy), and for a heavy organization the heavy organizations' shared rest too. Flooders among
   * themselves share the turns without resting (a rest would leave idle the cores none of them needs
   * kept), and an organization alone never rests.
   */
  private restMs(organizationId: string, at: number): number {
    const heavy = this.held(organizationId, at);
    const own = this.ownRestMs(organizationId, at);
    if ((own === 0 && !heavy) || !this.lightActive(organizationId, at)) return 0;
    return heavy ? Math.max(own, restLeft(this.heavyOwed, at)) : own;
  }

  /**
   * Whether a light organization other than this one sent a request in the last ACTIVE_MS: one not made
   * heavy (`held`), with no search waiting, that owes no rest or has shown it paces itself (`paced`):
   * owing less than SEARCH_REST_ALLOWANCE_MS is not enough, or a flooder would count as light for
   * the others while its rest climbs to the allowance, and flooders would rest for each other. A
   * reader owes a short rest after each of its searches: while it did, the flooders saw nobody light and
   * ran without resting (at a share of 10 %, half of the time). A flooder from one connection owes one
   * between every two of its searches too, but never arrives owing nothing: flooders do not rest for
   * each other.
   */
  private lightActive(organizationId: string, at: number): boolean {
    const since = at - ACTIVE_MS;
    for (const [other, seen] of this.lastSeen) {
      if (other === organizationId || seen < since || this.held(other, at)) continue;
      if (this.lanes.get(other)?.waiting.length) continue;
      if (this.owedMs(other, at) === 0 || this.paced.has(other)) return true;
    }
    return false;
  }

  /**
   * Dispatches again when the first rest of a waiting organization ends (one timer for all). `at` must
   * be the reading that found the rests: read again, a rest just ending could be found over, and no
   * timer armed for a search that was refused a turn for it.
   */
  private wakeAfterRests(at: number): void {
    let soonest = Infinity;
    for (const lane of this.line) {
      const rest = this.restMs(lane.organizationId, at);
      if (rest > 0) soonest = Math.min(soonest, at + rest);
    }
    if (soonest >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = soonest;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Infinity;
        this.dispatch();
      },
      Math.ceil(soonest - at),
    );
    this.wakeTimer.unref();
  }

  /** Hands free turns to the waiting organizations with the fewest searches running, longest-waiting first. */
  private dispatch(): void {
    const at = now();
    for (;;) {
      let chosen = -1;
      let fewest = Infinity;
      for (const [i, lane] of this.line.entries()) {
        if (lane.running < fewest && this.mayStart(lane, at)) {
          chosen = i;
          fewest = lane.running;
          if (fewest === 0) break;
        }
      }
      if (chosen < 0) {
        this.wakeAfterRests(at);
        return;
      }
      const [lane] = this.line.splice(chosen, 1);
      const next = lane.waiting.shift();
      if (!next) return; // never: a lane is in line while it has searches waiting
      const heavy = this.take(lane, at);
      // Its next search waits behind every other organization's.
      if (lane.waiting.length > 0) this.line.push(lane);
      next(heavy);
    }
  }
}

/**
 * How long an organization counts as active after its last request: longer than the gaps between a
 * reading client's requests, short enough that a flooder alone soon has all the turns back.
 */
export const ACTIVE_MS = 1000;

/** How many of an organization's searches in a row held for its own rest make it heavy (see noteArrival). */
export const HOLDS_TO_BE_HEAVY = 3;

/** The longest rest an organization can owe, however long its searches took. */
export const MAX_REST_MS = 1000;

/** A rest owed: `ms` as of `at` (now()), served by the time since, whether or not a search waits. */
interface Rest {
  ms: number;
  at: number;
}

/** What is left of `rest` at `at`. */
const restLeft = (rest: Rest | undefined, at: number): number => (rest ? Math.max(0, rest.ms - (at - rest.at)) : 0);

/** `rest` with `ms` more owed at `at`, at most MAX_REST_MS in all. */
const restPlus = (rest: Rest | undefined, ms: number, at: number): Rest => ({
  ms: Math.min(MAX_REST_MS, restLeft(rest, at) + ms),
  at,
});

/** The gate's clock: monotonic, so a step of the wall clock neither stretches nor cuts a rest. */
const now = () => performance.now();
