import { billing, accounts } from './api/endpoints';
import { type ApiError, asApiError } from './api/http';
import type { Subscription, User } from './api/types';
import { createStore } from './lib/store';

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
