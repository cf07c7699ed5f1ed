import type { KeyGrant } from '../api-keys/verified-key-cache.js';
import type { Principal } from '../common/principal.js';
import type { TeamRole } from '../common/roles.js';
import type { Account } from './account-cache.js';

/**
 * What a verified credential stands for: an API key's cached grant, or the account behind a JWT and
 * the organization the token acts in; with the role its user has there now (membership-cache.ts).
 */
export type VerifiedCredential =
  { apiKey: KeyGrant; role: TeamRole } | { account: Account; organizationId: string; role: TeamRole };

/**
 * The one place a principal is made, for either credential (the two Passport strategies call it).
 * What a principal gains is added here and in `common/principal.ts`.
 */
export function principalOf(verified: VerifiedCredential): Principal {
  if ('apiKey' in verified) {
    const grant = verified.apiKey;
    return {
      kind: 'api_key',
      userId: grant.userId,
      // A key always acts in the organization it was created in, with its creator's role there now.
      organizationId: grant.organizationId,
      role: verified.role,
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
    organizationId: verified.organizationId,
    role: verified.role,
    isAdmin: account.isAdmin,
    apiKeyId: null,
    keyPrefix: null,
  };
}
