import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { InvalidCredentialsError, ThrottledError } from '../common/errors.js';
import { rateLimited } from '../observability/metrics.js';
import { type Counter, CounterStore } from './counter-store.js';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;

/**
 * Failed sign-ins, counted per e-mail and per client address in a window that starts at the first
 * attempt. Each attempt reserves its count atomically *before* the password is hashed, so however
 * many guesses arrive at once, at most MAX_FAILURES_PER_EMAIL of them are evaluated (checking first
 * and counting after the hash let 40 concurrent guesses through). A success, or an attempt that fails
 * for another reason, gives its reservation back; a wrong password keeps it. Past the limit every
 * attempt for that e-mail (or from that address), right or wrong, gets 429 until the window ends;
 * refused attempts are not counted, so the block always lifts. Successes reset nothing: a user signing
 * in elsewhere cannot clear an attacker's address, nor an attacker's success a victim's counter.
 */
@Injectable()
export class SignInThrottle {
  constructor(private readonly counters: CounterStore) {}

  async attempt<T>(email: string, address: string | undefined, signIn: () => Promise<T>): Promise<T> {
    const counters = this.countersFor(email, address);
    const reservation = await this.counters.reserve(counters);
    if (!reservation.granted) {
      rateLimited.inc({ limit: 'sign_in' });
      throw new ThrottledError(reservation.retryAfterMs / 1000);
    }
    let failed = false;
    try {
      return await signIn();
    } catch (error) {
      failed = error instanceof InvalidCredentialsError;
      throw error;
    } finally {
      if (!failed) await this.counters.release(counters.map(({ key }) => key));
    }
  }

  private countersFor(email: string, address: string | undefined): Counter[] {
    // Hashed: no e-mail addresses in Redis keys.
    const emailHash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
    const counters = [{ key: `signin:email:${emailHash}`, limit: MAX_FAILURES_PER_EMAIL, windowMs: SIGN_IN_WINDOW_MS }];
    if (address)
      counters.push({ key: `signin:addr:${address}`, limit: MAX_FAILURES_PER_ADDRESS, windowMs: SIGN_IN_WINDOW_MS });
    return counters;
  }
}
