import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { REDIS } from './redis.js';

/** A counter of attempts in a window that starts with its first count, refused at `limit`. */
export interface Counter {
  key: string;
  limit: number;
  windowMs: number;
}

/** A counter after a granted reservation: its count (this one included) and the time left in its window. */
export interface CounterState {
  count: number;
  remainingMs: number;
}

export type Reservation =
  | { granted: true; /** In the order of the counters asked. */ counters: CounterState[] }
  | { granted: false; retryAfterMs: number };

// All or nothing, in one step: when any counter is at its limit nothing is counted and the longest
// wait is returned (negative, alone); otherwise every counter is incremented and each one's count and
// time left follow a leading 1. Every key keeps a TTL: a counter without one would be a permanent lock-out.
const RESERVE = `
local wait = 0
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= tonumber(ARGV[i * 2 - 1]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then redis.call('PEXPIRE', key, ARGV[i * 2]); ttl = tonumber(ARGV[i * 2]) end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return {-wait} end
local states = {1}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  if count == 1 or redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[i * 2]) end
  table.insert(states, count)
  table.insert(states, redis.call('PTTL', key))
end
return states`;

// Gives back a reservation (the attempt turned out not to count). A counter back at zero is removed,
// so that the next window starts with the next attempt that counts.
const RELEASE = `
for _, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count <= 1 then redis.call('DEL', key) else redis.call('DECR', key) end
end
return 1`;

// One more count; returns the count and the time left in the window.
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

const MEMORY_SWEEP_AT = 100_000;

/**
 * Windowed counters for the limits before authentication: in Redis when REDIS_URL is set (shared by
 * every instance, each decision one atomic script), in memory otherwise. While Redis is unreachable
 * the counters fall back to this instance's memory, so the limits still hold per instance.
 */
@Injectable()
export class CounterStore {
  private readonly logger = new Logger(CounterStore.name);
  private readonly memory = new Map<string, { count: number; resetAt: number }>();
  private lastWarning = 0;

  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async reserve(counters: Counter[]): Promise<Reservation> {
    if (this.redis) {
      try {
        const args = counters.flatMap(({ limit, windowMs }) => [limit, windowMs]);
        const reply = (
          (await this.redis.eval(RESERVE, counters.length, ...counters.map(({ key }) => key), ...args)) as number[]
        ).map(Number);
        if (reply[0] <= 0) return { granted: false, retryAfterMs: -reply[0] };
        return {
          granted: true,
          counters: counters.map((_, i) => ({ count: reply[1 + i * 2], remainingMs: Math.max(reply[2 + i * 2], 1) })),
        };
      } catch (error) {
        this.warn(error);
      }
    }
    return this.reserveInMemory(counters);
  }

  async release(keys: string[]): Promise<void> {
    if (this.redis) {
      try {
        await this.redis.eval(RELEASE, keys.length, ...keys);
        return;
      } catch (error) {
        this.warn(error);
      }
    }
    for (const key of keys) {
      const entry = this.memory.get(key);
      if (entry && entry.count > 1) entry.count--;
      else this.memory.delete(key);
    }
  }

  /** Counts one more and answers the count and the milliseconds left in its window. */
  async increment(key: string, windowMs: number): Promise<{ count: number; remainingMs: number }> {
    if (this.redis) {
      try {
        const [count, ttl] = (await this.redis.eval(INCREMENT, 1, key, windowMs)) as [number, number];
        return { count, remainingMs: Math.max(ttl, 1) };
      } catch (error) {
        this.warn(error);
      }
    }
    const entry = this.current(key, windowMs, Date.now());
    entry.count++;
    return { count: entry.count, remainingMs: entry.resetAt - Date.now() };
  }

  // Synchronous, hence atomic within this process.
  private reserveInMemory(counters: Counter[]): Reservation {
    const now = Date.now();
    const entries = counters.map((counter) => ({ counter, entry: this.current(counter.key, counter.windowMs, now) }));
    const wait = Math.max(
      0,
      ...entries.map(({ counter, entry }) => (entry.count >= counter.limit ? entry.resetAt - now : 0)),
    );
    if (wait > 0) return { granted: false, retryAfterMs: wait };
    for (const { entry } of entries) entry.count++;
    return {
      granted: true,
      counters: entries.map(({ entry }) => ({ count: entry.count, remainingMs: Math.max(entry.resetAt - now, 1) })),
    };
  }

  private current(key: string, windowMs: number, now: number): { count: number; resetAt: number } {
    let entry = this.memory.get(key);
    if (!entry || entry.resetAt <= now) {
      if (this.memory.size >= MEMORY_SWEEP_AT) this.sweep(now);
      entry = { count: 0, resetAt: now + windowMs };
      this.memory.set(key, entry);
    }
    return entry;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.memory) if (entry.resetAt <= now) this.memory.delete(key);
    // Still full of live windows (a flood of addresses): start over rather than grow without bound.
    if (this.memory.size >= MEMORY_SWEEP_AT) this.memory.clear();
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastWarning < 30_000) return;
    this.lastWarning = Date.now();
    this.logger.warn(`pre-authentication limits counted in memory (Redis): ${(error as Error).message}`);
  }
}
