import { BoundedCache } from '../common/bounded-cache.js';

/** What an access token proved once its signature and claims were checked. */
export interface VerifiedToken {
  userId: string;
  /** The token's `organization_id`; null for a token issued before teams (it acts in the user's own). */
  organizationId: string | null;
  issuedAt: number;
  expiresAtMs: number;
}

export const VERIFIED_TOKENS_MAX_ENTRIES = 20_000;

/**
 * Access tokens whose signature and claims were already checked, until their own `exp`. A browser
 * sends one token many times; re-verifying it each time was the JWT route's own cost. Any change to
 * a token makes it another string, which is verified in full. Nothing invalidates an entry: what a
 * token may still do (sign-out everywhere, a deactivated account) is read from its account each time.
 */
export class VerifiedTokenCache {
  private readonly tokens = new BoundedCache<string, VerifiedToken>({ maxEntries: VERIFIED_TOKENS_MAX_ENTRIES });

  /** The token's claims if it was verified before and has not expired. */
  get(token: string): VerifiedToken | undefined {
    const known = this.tokens.get(token);
    return known && known.expiresAtMs > Date.now() ? known : undefined;
  }

  remember(token: string, verified: VerifiedToken): void {
    const ttlMs = Math.floor(verified.expiresAtMs - Date.now());
    if (ttlMs > 0) this.tokens.set(token, verified, { ttlMs });
  }

  get size(): number {
    return this.tokens.size;
  }
}
