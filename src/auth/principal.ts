import type { KeyGrant } from '../api-keys/verified-key-cache.js';
import type { Principal } from '../common/principal.js';
import type { Account } from './account-cache.js';

/** What a verified credential stands for: an API key's cached grant, or the account behind a JWT. */
export type VerifiedCredential = { apiKey: KeyGrant } | { account: Account };

/**
 * The one place a principal is made, for either credential (the two Passport strategies call it).
 * What a principal gains (a team member's role) is added here and in `common/principal.ts`.
 */
export function principalOf(verified: VerifiedCredential): Principal {
  if ('apiKey' in verified) {
    const grant = verified.apiKey;
    return {
      kind: 'api_key',
      userId: grant.userId,
      organizationId: grant.organizationId,
      // Only a JWT carries admin rights: an admin's API key is an ordinary caller.
      isAdmin: false,
      apiKeyId: grant.keyId,
      keyPrefix: grant.keyPrefix,
      scopes: grant.scopes,
      rateLimitPerMinute: grant.rateLimitPerMinute,
      collectionIds: grant.collectionIds,
    };
  }
  const account = verified.account;
  return {
    kind: 'jwt',
    userId: account.id,
    organizationId: account.organizationId,
    isAdmin: account.isAdmin,
    apiKeyId: null,
    keyPrefix: null,
  };
}
