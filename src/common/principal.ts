import type { TeamRole } from './roles.js';
import type { ApiKeyScope } from './scopes.js';

/**
 * Who is calling, whichever credential they used. Every controller reads this and nothing else. Built in
 * one place, `principalOf` (auth/principal.ts), from an API key's grant or a JWT's account.
 */
export interface Principal {
  kind: 'jwt' | 'api_key';
  userId: string;
  /** The organization it acts in: a JWT's active one (its `organization_id`), or the key's. */
  organizationId: string;
  /**
   * The user's role in that organization now (for a key: its creator's), read from the membership
   * cache on every request; a key's scopes narrow it further.
   */
  role: TeamRole;
  /** Only a JWT carries admin rights: an admin's API key is an ordinary caller. */
  isAdmin: boolean;
  apiKeyId: string | null;
  keyPrefix: string | null;
  /** An API key's scopes; null or absent: every scope (always so for a JWT). */
  scopes?: readonly ApiKeyScope[] | null;
  /** An API key's own per-minute limit; null or absent: RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute?: number | null;
  /** The collections an API key is limited to, in its order; null or absent: every collection (always so for a JWT). */
  collectionIds?: readonly string[] | null;
}
