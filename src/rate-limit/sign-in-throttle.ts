import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidCredentialsError, ThrottledError } from '../common/errors.js';
import { rateLimited } from '../observability/metrics.js';
import { REDIS } from './redis.js';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;

interface Counter {
  key: string;
  limit: number;
}

// INCR that always leaves a TTL on the key: a counter without one would be a permanent lock-out.
const INCREMENT_WITH_WINDOW = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/**
 * Failed sign-ins, counted per e-mail and per client address in a window that starts at the first
 * failure. Past MAX_FAILURES_PER_EMAIL (or MAX_FAILURES_PER_ADDRESS) every attempt for that e-mail
 * (or from that address), right or wrong, gets 429 until the window ends; attempts refused meanwhile
 * are not counted, so the lock always lifts. Successes reset nothing: a user signing in elsewhere
 * cannot clear an attacker's address, and an attacker's success cannot clear a victim's counter.
 * In Redis when REDIS_URL is set (shared by every instance), in memory otherwise. If Redis is down,
 * sign-in is not blocked (the outage is logged).
 */
@Injectable()
export class SignInThrottle {
  private readonly logger = new Logger(SignInThrottle.name);
  private readonly memory = new Map<string, { count: number; resetAt: number }>();

  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async attempt<T>(email: string, address: string | undefined, signIn: () => Promise<T>): Promise<T> {
    const counters = this.countersFor(email, address);
    const retryAfterMs = await this.blockedFor(counters);
    if (retryAfterMs > 0) {
      rateLimited.inc({ limit: 'sign_in' });
      throw new ThrottledError(retryAfterMs / 1000);
    }
    try {
      return await signIn();
    } catch (error) {
      if (error instanceof InvalidCredentialsError) await this.recordFailure(counters);
      throw error;
    }
  }

  private countersFor(email: string, address: string | undefined): Counter[] {
    // Hashed: no e-mail addresses in Redis keys.
    const emailHash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
    const counters = [{ key: `signin:email:${emailHash}`, limit: MAX_FAILURES_PER_EMAIL }];
    if (address) counters.push({ key: `signin:addr:${address}`, limit: MAX_FAILURES_PER_ADDRESS });
    return counters;
  }

  /** Milliseconds until the longest-blocked counter reopens; 0 when none is over its limit. */
  private async blockedFor(counters: Counter[]): Promise<number> {
    if (!this.redis) {
      const now = Date.now();
      return Math.max(
        0,
        ...counters.map(({ key, limit }) => {
          const entry = this.memory.get(key);
          return entry && entry.resetAt > now && entry.count >= limit ? entry.resetAt - now : 0;
        }),
      );
    }
    try {
      const pipeline = this.redis.pipeline();
      for (const { key } of counters) pipeline.get(key).pttl(key);
      const replies = (await pipeline.exec()) ?? [];
      return Math.max(
        0,
        ...counters.map(({ limit }, i) => {
          const count = Number(replies[i * 2]?.[1] ?? 0);
          const ttl = Number(replies[i * 2 + 1]?.[1] ?? 0);
          return count >= limit ? Math.max(ttl, 1000) : 0;
        }),
      );
    } catch (error) {
      this.logger.warn(`sign-in throttle not checked (Redis): ${(error as Error).message}`);
      return 0;
    }
  }

  private async recordFailure(counters: Counter[]): Promise<void> {
    if (!this.redis) {
      const now = Date.now();
      if (this.memory.size > 100_000) this.sweep(now);
      for (const { key } of counters) {
        const entry = this.memory.get(key);
        if (entry && entry.resetAt > now) entry.count++;
        else this.memory.set(key, { count: 1, resetAt: now + SIGN_IN_WINDOW_MS });
      }
      return;
    }
    try {
      const pipeline = this.redis.pipeline();
      for (const { key } of counters) pipeline.eval(INCREMENT_WITH_WINDOW, 1, key, SIGN_IN_WINDOW_MS);
      await pipeline.exec();
    } catch (error) {
      this.logger.warn(`sign-in failure not counted (Redis): ${(error as Error).message}`);
    }
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.memory) if (entry.resetAt <= now) this.memory.delete(key);
  }
}
