import type { EntityManager } from 'typeorm';

/**
 * Ends every session of a user: all refresh tokens are revoked, and access tokens issued until `at`
 * are refused (the account cache forgets within its TTL on other instances). For sign-out
 * everywhere, promotion to administrator and a password change. Once the transaction has committed,
 * the caller waits for `afterCutOff(at)` before answering (see there).
 */
export async function endAllSessions(manager: EntityManager, userId: string, at: Date): Promise<void> {
  await manager.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [userId]);
  // The service's clock, as for `iat`, not the database's: the two are compared.
  await manager.query(`UPDATE users SET tokens_valid_after = $2 WHERE id = $1`, [userId, at]);
}

/**
 * Whether an access token issued at `issuedAtSeconds` does not postdate the user's cut-off. `iat` has
 * whole seconds, so a token from the very second of the cut-off is refused too (it may predate it).
 */
export function issuedBeforeCutOff(issuedAtSeconds: number | undefined, validAfterMs: number | null): boolean {
  if (validAfterMs === null) return false;
  if (typeof issuedAtSeconds !== 'number') return true;
  return issuedAtSeconds <= Math.floor(validAfterMs / 1000);
}

/**
 * Resolves once the second of the cut-off has passed (at most a second), so that a sign-in made after
 * the ending call has answered gets tokens from a later second, which are accepted.
 */
export function afterCutOff(at: Date): Promise<void> {
  const wait = (Math.floor(at.getTime() / 1000) + 1) * 1000 - Date.now();
  return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
}
