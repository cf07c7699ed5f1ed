import { Inject, Injectable } from '@nestjs/common';
import { ThrottledError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { rateLimited } from '../observability/metrics.js';
import { CounterStore } from './counter-store.js';

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
  /** Addresses refused for failed credentials, until when (epoch ms). */
  private readonly blocked = new Map<string, number>();

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

  /** Counts one request of this address under the rule, or throws the 429. */
  async take(rule: AddressRule, address: string): Promise<void> {
    const { limit, windowMs } = this.rules[rule];
    const reservation = await this.counters.reserve([{ key: `pre:${rule}:${address}`, limit, windowMs }]);
    if (!reservation.granted) {
      rateLimited.inc({ limit: `address_${rule}` });
      throw new ThrottledError(reservation.retryAfterMs / 1000);
    }
  }

  /** Throws the 429 while this address is refused for failed credentials. Synchronous: memory only. */
  checkFailures(address: string, now = Date.now()): void {
    const until = this.blocked.get(address);
    if (until === undefined) return;
    if (until <= now) {
      this.blocked.delete(address);
      return;
    }
    rateLimited.inc({ limit: 'address_failed_auth' });
    throw new ThrottledError((until - now) / 1000);
  }

  /** Counts a failed credential; at the limit the address is refused until its window ends. */
  async recordFailure(address: string): Promise<void> {
    const { count, remainingMs } = await this.counters.increment(`pre:failed:${address}`, MINUTE_MS);
    if (count < this.failureLimit) return;
    if (this.blocked.size >= BLOCKED_MAX) this.blocked.clear();
    this.blocked.set(address, Date.now() + remainingMs);
  }
}
