import { Inject, Injectable } from '@nestjs/common';
import { ThrottledError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { rateLimited } from '../observability/metrics.js';
import { CounterStore } from './counter-store.js';
import { type RateLimitState, rateLimitHeaders } from './principal-rate-limiter.js';

/** What a client address may do before it has authenticated, each with its own budget. */
export type AddressRule = 'signup' | 'signin' | 'token';

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const BLOCKED_MAX = 50_000;

/**
 * Per-address limits on the routes that work before any authentication (sign-up, sign-in, refresh,
 * verify, logout) and on failed credentials (invalid API keys and JWTs), so that one client cannot
 * spend the database pool or the CPU (argon2) of everyone. Counted in the CounterStore (Redis when
 * configured). Failed credentials are counted after the fact, and an address past the limit is then
 * refused from this instance's memory, so a valid credential never waits on Redis.
 */
@Injectable()
export class AddressLimits {
  private readonly rules: Record<AddressRule, { limit: number; windowMs: number }>;
  private readonly failureLimit: number;
  /** Addresses refused for failed credentials. */
  private readonly blocked = new Refusals();
  /** Per rule and address (`pre:<rule>:<address>`), refused by the store. */
  private readonly refused = new Refusals();

  constructor(
    private readonly counters: CounterStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rules = {
      signup: { limit: config.SIGNUP_LIMIT_PER_HOUR, windowMs: HOUR_MS },
      signin: { limit: config.SIGNIN_LIMIT_PER_MINUTE, windowMs: MINUTE_MS },
      token: { limit: config.TOKEN_LIMIT_PER_MINUTE, windowMs: MINUTE_MS },
    };
    this.failureLimit = config.FAILED_AUTH_LIMIT_PER_MINUTE;
  }

  /**
   * Counts one request of this address under the rule and answers the RateLimit-* headers of its
   * bucket, or throws the 429 (with the same headers). A refused address is then refused from memory
   * until the store said capacity frees (nothing gives a count back, so that is exact): a flood past
   * its limit costs no more round trips to Redis, which were 14 % of the service's CPU under the abuse
   * bench's sign-in flood.
   */
  async take(rule: AddressRule, address: string): Promise<Record<string, string>> {
    const refusedMs = this.refusedMs(rule, address);
    if (refusedMs > 0) throw this.refusal(rule, refusedMs);
    const key = `pre:${rule}:${address}`;
    const { limit, windowMs } = this.rules[rule];
    const reservation = await this.counters.reserve([{ key, limit, windowMs }]);
    if (!reservation.granted) {
      this.refused.refuse(key, reservation.retryAfterMs);
      throw this.refusal(rule, reservation.retryAfterMs);
    }
    const [{ count, remainingMs }] = reservation.counters;
    return this.headers(rule, { limit, remaining: Math.max(0, limit - count), resetSeconds: seconds(remainingMs) });
  }

  /** How long (ms) this instance already knows the address is refused under the rule; 0 when it does not. */
  refusedMs(rule: AddressRule, address: string): number {
    return this.refused.remainingMs(`pre:${rule}:${address}`, Date.now());
  }

  /** How long (ms) the address stays refused for failed credentials; 0 when it is not. Memory only. */
  failuresRefusedMs(address: string): number {
    return this.blocked.remainingMs(address, Date.now());
  }

  /**
   * The 429 for a refusal of `retryAfterMs`, counted in the metrics under its limit; under a rule, with
   * its bucket's RateLimit-* headers (nothing left until the refusal ends).
   */
  refusal(limit: AddressRule | 'failed_auth', retryAfterMs: number): ThrottledError {
    rateLimited.inc({ limit: `address_${limit}` });
    const throttled = new ThrottledError(retryAfterMs / 1000);
    if (limit !== 'failed_auth')
      Object.assign(
        throttled.headers,
        this.headers(limit, { limit: this.rules[limit].limit, remaining: 0, resetSeconds: seconds(retryAfterMs) }),
      );
    return throttled;
  }

  private headers(rule: AddressRule, state: RateLimitState): Record<string, string> {
    return rateLimitHeaders(state, this.rules[rule].windowMs / 1000);
  }

  /** Counts a failed credential; at the limit the address is refused until its window ends. */
  async recordFailure(address: string): Promise<void> {
    const { count, remainingMs } = await this.counters.increment(`pre:failed:${address}`, MINUTE_MS);
    if (count < this.failureLimit) return;
    this.blocked.refuse(address, remainingMs);
  }
}

/** Whole seconds, at least 1, as Retry-After rounds them. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Keys refused until a moment, in this instance's memory: at most BLOCKED_MAX, all forgotten when full. */
class Refusals {
  private readonly until = new Map<string, number>();

  /** How long `key` stays refused (ms); 0 when it is not, and an expired refusal is forgotten. */
  remainingMs(key: string, now: number): number {
    const until = this.until.get(key);
    if (until === undefined) return 0;
    if (until > now) return until - now;
    this.until.delete(key);
    return 0;
  }

  refuse(key: string, forMs: number): void {
    if (this.until.size >= BLOCKED_MAX) this.until.clear();
    this.until.set(key, Date.now() + forMs);
  }
}
