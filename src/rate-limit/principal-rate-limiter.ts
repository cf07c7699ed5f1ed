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

/** The IETF httpapi rate-limit draft's headers (RateLimit-Limit, -Remaining, -Reset, -Policy). */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    'RateLimit-Policy': `${state.limit};w=${WINDOW_MS / 1000}`,
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

/**
 * RATE_LIMIT_PER_MINUTE (or a key's own `rate_limit_per_minute`) per API key and per user (JWT), in fixed one-minute windows. The decision is
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

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {
    this.limit = config.RATE_LIMIT_PER_MINUTE;
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sync(), this.redis ? SYNC_INTERVAL_MS : WINDOW_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Counts one request of this principal and says what is left, or throws the 429 (with Retry-After and
   * the same RateLimit-* headers) when over the limit.
   */
  consume(principal: Principal, now = Date.now()): RateLimitState {
    const id = principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
    const window = Math.floor(now / WINDOW_MS);
    let entry = this.windows.get(id);
    if (entry?.window !== window) {
      entry = { window, shared: 0, sending: 0, pending: 0 };
      this.windows.set(id, entry);
    }
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    const used = entry.shared + entry.sending + entry.pending;
    // A key's own limit (cached with its grant) overrides the default.
    const limit = principal.rateLimitPerMinute ?? this.limit;
    if (used >= limit) {
      rateLimited.inc({ limit: 'principal' });
      const throttled = new ThrottledError(resetSeconds);
      Object.assign(throttled.headers, rateLimitHeaders({ limit, remaining: 0, resetSeconds }));
      throw throttled;
    }
    entry.pending++;
    return { limit, remaining: limit - used - 1, resetSeconds };
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
