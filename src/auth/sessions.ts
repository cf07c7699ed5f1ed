/** Announced (pg_notify, on commit) with the user's id when an account's sessions end; see AccountCache. */
export const ACCOUNT_CHANGE_CHANNEL = 'account_changed';

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
