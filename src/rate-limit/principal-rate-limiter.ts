import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ThrottledError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { rateLimited } from '../observability/metrics.js';
import { REDIS } from './redis.js';

const WINDOW_MS = 60_000;
/** How often local counts are pushed to Redis and the shared totals read back. */
export const SYNC_INTERVAL_MS = 100;

/** What a principal has left in the current window, for the RateLimit-* response headers. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window ends and capacity frees up. */
  resetSeconds: number;
}

/**
 * The IETF httpapi rate-limit draft's headers (RateLimit-Limit, -Remaining, -Reset, -Policy), for a
 * window of `windowSeconds` (a principal's minute unless said otherwise).
 */
export function rateLimitHeaders(state: RateLimitState, windowSeconds = WINDOW_MS / 1000): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    'RateLimit-Policy': `${state.limit};w=${windowSeconds}`,
  };
}

interface Window {
  window: number;
  /** The shared total as Redis last reported it (this instance's flushed counts included). */
  shared: number;
  /** Sent to Redis, reply not yet in. */
  sending: number;
  /** Counted here since the last send. */
  pending: number;
}

/** What a window has counted: the shared total, what is on its way to Redis, and what is not yet sent. */
const used = (entry: Window) => entry.shared + entry.sending + entry.pending;

/** The 429 of a spent bucket, with its RateLimit-* headers (nothing left until the window ends). */
function throttled(metric: 'principal' | 'organization', limit: number, resetSeconds: number): ThrottledError {
  rateLimited.inc({ limit: metric });
  const error = new ThrottledError(resetSeconds);
  Object.assign(error.headers, rateLimitHeaders({ limit, remaining: 0, resetSeconds }));
  return error;
}

/**
 * RATE_LIMIT_PER_MINUTE (or a key's own `rate_limit_per_minute`, never above KEY_RATE_LIMIT_MAX_PER_MINUTE)
 * per API key and per user (JWT), and ORG_RATE_LIMIT_PER_MINUTE per organization across all its keys
 * and users, in fixed one-minute windows. A request counts in both buckets or in neither. The decision is
 * local and synchronous, so the request path never waits on Redis: each instance counts in memory
 * and every SYNC_INTERVAL_MS pushes its new counts to Redis in one pipeline (INCRBY) and reads the
 * shared totals of this minute's principals back. Alone, an instance is exact; several together can overshoot by what the others
 * served within one sync interval. Without REDIS_URL, or while Redis is down, counts are per instance.
 */
@Injectable()
export class PrincipalRateLimiter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrincipalRateLimiter.name);
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private syncing = false;
  private readonly limit: number;
  private readonly keyLimitMax: number;
  private readonly organizationLimit: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {
    this.limit = config.RATE_LIMIT_PER_MINUTE;
    this.keyLimitMax = config.KEY_RATE_LIMIT_MAX_PER_MINUTE;
    this.organizationLimit = config.ORG_RATE_LIMIT_PER_MINUTE;
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sync(), this.redis ? SYNC_INTERVAL_MS : WINDOW_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Counts one request of this principal and of its organization and says what is left in the tighter
   * of the two buckets, or throws the 429 (with Retry-After and the RateLimit-* headers of the bucket
   * that refused) when either is spent.
   */
  consume(principal: Principal, now = Date.now()): RateLimitState {
    const window = Math.floor(now / WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    // A key's own limit (cached with its grant) overrides the default, up to the operator's ceiling
    // (keys given more before the ceiling existed included).
    const own = principal.rateLimitPerMinute ?? null;
    const principalLimit = own === null ? this.limit : Math.min(own, this.keyLimitMax);
    const principalEntry = this.entry(
      principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`,
      window,
    );
    const principalLeft = principalLimit - used(principalEntry);
    if (principalLeft <= 0) throw throttled('principal', principalLimit, resetSeconds);
    const organizationEntry = this.entry(`org:${principal.organizationId}`, window);
    const organizationLeft = this.organizationLimit - used(organizationEntry);
    if (organizationLeft <= 0) throw throttled('organization', this.organizationLimit, resetSeconds);
    principalEntry.pending++;
    organizationEntry.pending++;
    return organizationLeft < principalLeft
      ? { limit: this.organizationLimit, remaining: organizationLeft - 1, resetSeconds }
      : { limit: principalLimit, remaining: principalLeft - 1, resetSeconds };
  }

  private entry(id: string, window: number): Window {
    let entry = this.windows.get(id);
    if (entry?.window !== window) {
      entry = { window, shared: 0, sending: 0, pending: 0 };
      this.windows.set(id, entry);
    }
    return entry;
  }

  /**
   * Pushes pending counts (INCRBY) and reads back the shared total of every principal seen in the
   * current window (GET for those with nothing new), so no instance's view is older than one interval.
   */
  async sync(now = Date.now()): Promise<void> {
    const current = Math.floor(now / WINDOW_MS);
    const batch: { entry: Window; count: number; reply: number }[] = [];
    for (const [id, entry] of this.windows) {
      if (entry.window < current) this.windows.delete(id);
    }
    if (!this.redis || this.syncing || this.windows.size === 0) return;
    this.syncing = true;
    const pipeline = this.redis.pipeline();
    let replies = 0;
    for (const [id, entry] of this.windows) {
      const key = `rl:${id}:${entry.window}`;
      const count = entry.pending;
      entry.pending = 0;
      entry.sending += count;
      batch.push({ entry, count, reply: replies });
      if (count > 0) {
        pipeline.incrby(key, count).pexpire(key, 2 * WINDOW_MS);
        replies += 2;
      } else {
        pipeline.get(key);
        replies += 1;
      }
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      for (const { entry, count, reply } of batch) {
        entry.sending -= count;
        const [error, total] = results[reply] ?? [new Error('no reply')];
        if (error) entry.pending += count;
        else entry.shared = Math.max(entry.shared, Number(total ?? 0) - entry.sending);
      }
    } catch (error) {
      for (const { entry, count } of batch) {
        entry.sending -= count;
        entry.pending += count;
      }
      this.logger.debug(`rate-limit sync failed: ${(error as Error).message}`);
    } finally {
      this.syncing = false;
    }
  }
}
