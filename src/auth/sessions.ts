import type { EntityManager } from 'typeorm';

/**
 * Ends every session of a user: all refresh tokens are revoked, and access tokens issued until now
 * are refused (the account cache forgets within its TTL on other instances). For sign-out
 * everywhere, promotion to administrator and a password change.
 */
export async function endAllSessions(manager: EntityManager, userId: string): Promise<void> {
  await manager.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [userId]);
  await manager.query(`UPDATE users SET tokens_valid_after = now() WHERE id = $1`, [userId]);
}

/**
 * Whether an access token issued at `issuedAtSeconds` does not postdate the user's cut-off. `iat` has
 * whole seconds, so a token from the very second of the cut-off is refused too: it may have been issued
 * just before it. (A sign-in within that same second would need another; no person is that quick.)
 */
export function issuedBeforeCutOff(issuedAtSeconds: number | undefined, validAfterMs: number | null): boolean {
  if (validAfterMs === null) return false;
  if (typeof issuedAtSeconds !== 'number') return true;
  return issuedAtSeconds <= Math.floor(validAfterMs / 1000);
}
