import { billing, accounts } from './api/endpoints';
import { type ApiError, asApiError } from './api/http';
import type { Subscription, TeamRole, User } from './api/types';
import { createStore, useStore } from './lib/store';

/** The current quota, shown in the header on every page and refreshed after anything that spends. */
export const quota = createStore<{ subscription: Subscription | null; error: ApiError | null }>({
  subscription: null,
  error: null,
});

export async function reloadQuota(): Promise<void> {
  try {
    quota.set({ subscription: await billing.subscription(), error: null });
  } catch (error) {
    quota.set({ subscription: quota.get().subscription, error: asApiError(error) });
  }
}

export const currentUser = createStore<User | null>(null);

export async function loadCurrentUser(): Promise<void> {
  try {
    currentUser.set(await accounts.me());
  } catch {
    // The header simply shows no e-mail; a session problem is handled by the client.
  }
}

export function resetSignedInState(): void {
  quota.set({ subscription: null, error: null });
  currentUser.set(null);
}

const ROLES: TeamRole[] = ['viewer', 'member', 'admin', 'owner'];

/** Whether `role` may do what `needed` may (the contract's table: each role may do what those below it may). */
export function roleAtLeast(role: TeamRole | null | undefined, needed: TeamRole): boolean {
  return role !== null && role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * Whether the signed-in person's role in the active organization is at least `needed`: what the
 * screens show follows it. False until `me` has answered, so a viewer never sees a button flash by.
 */
export function useRoleAtLeast(needed: TeamRole): boolean {
  return roleAtLeast(useStore(currentUser)?.role, needed);
}
