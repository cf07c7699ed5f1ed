import { createStore } from '../lib/store';
import { ApiError } from './http';
import { publicClient, unwrap } from './public';

interface Tokens {
  /** Kept in memory only: a script injected into the page could read localStorage. */
  access: string | null;
  /** In localStorage too, so that a reload or a second tab stays signed in. */
  refresh: string;
  /** When this browser received the access token (its own clock), so skew with the server's does not matter. */
  receivedAt: number;
}

export type AuthState = { signedIn: true } | { signedIn: false; notice?: string };

export const EXPIRED_NOTICE = 'Your session has expired. Please sign in again.';
const STORAGE_KEY = 'kqs.refresh';
/** Where earlier versions kept both tokens: read once to keep the person signed in, then removed. */
const LEGACY_STORAGE_KEY = 'kqs.session';
const REFRESH_LOCK = 'kqs.refresh';
const RETRY_MS = 15_000;

/**
 * The JWT pair of the signed-in person. The access token lives in memory only; the refresh token is
 * kept in localStorage so a reload or a second tab stays signed in (each tab gets its own access token
 * from it). The access token is refreshed shortly before it expires (and on demand after a 401); when
 * the refresh token is refused, the session ends and sign-in says why. When the service rotates
 * refresh tokens, each refresh stores the new one, and tabs take turns (a Web Lock) so that two never
 * present the same token: the second would look like a stolen token being replayed.
 */
class Session {
  readonly state = createStore<AuthState>({ signedIn: false });
  /**
   * The organization the tokens act in (their `organization_id` claim; null for tokens from before
   * teams, or when signed out). A switch, here or in another tab, changes it.
   */
  readonly organization = createStore<string | null>(null);
  private tokens: Tokens | null = null;
  private refreshing: Promise<string> | null = null;
  private timer: number | undefined;

  start(): void {
    const refresh = readStoredRefresh();
    this.tokens = refresh ? { access: null, refresh, receivedAt: 0 } : null;
    this.organization.set(refresh ? organizationOf(refresh) : null);
    this.state.set(this.tokens ? { signedIn: true } : { signedIn: false });
    window.addEventListener('storage', (event) => {
      if (event.key === STORAGE_KEY) this.adoptFromOtherTab();
    });
    // Timers stall while a laptop sleeps: check again when the page is looked at.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.tokens?.access && this.msLeft() < this.margin()) {
        this.refresh().catch(() => undefined);
      }
    });
  }

  async signIn(email: string, password: string): Promise<void> {
    const { access, refresh } = await unwrap(publicClient.POST('/auth/jwt/create/', { body: { email, password } }));
    this.keep({ access, refresh, receivedAt: Date.now() });
    this.state.set({ signedIn: true });
  }

  async signOut(): Promise<void> {
    const refresh = this.tokens?.refresh;
    this.end('You have signed out.');
    // Revoke the refresh token; the page is signed out whatever the answer.
    if (refresh) await publicClient.POST('/auth/jwt/logout/', { body: { refresh } }).catch(() => undefined);
  }

  /**
   * Ends every session of the person, on every device, this one included. Unlike signing out here, it
   * must be confirmed by the service: an error is thrown (and the page stays signed in) otherwise.
   */
  async signOutEverywhere(): Promise<void> {
    const refresh = await withRefreshLock(() => Promise.resolve(readStoredRefresh() ?? this.tokens?.refresh));
    if (!refresh || !this.tokens) throw sessionEnded();
    await unwrap(publicClient.POST('/auth/jwt/logout/', { body: { refresh, all: true } }));
    this.end('You have signed out on every device.');
  }

  expire(): void {
    if (this.tokens) this.end(EXPIRED_NOTICE);
  }

  /** A usable access token: refreshed first when there is none yet (a reload) or it is about to expire. */
  async accessToken(): Promise<string> {
    if (!this.tokens) throw sessionEnded();
    if (!this.tokens.access || this.msLeft() < 10_000) return this.refresh();
    return this.tokens.access;
  }

  /** One refresh at a time, however many requests ask for it. */
  refresh(): Promise<string> {
    this.refreshing ??= withRefreshLock(() => this.doRefresh()).finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<string> {
    // Another tab may have rotated the refresh token while this one waited for the lock.
    const stored = readStoredRefresh();
    if (this.tokens && stored && stored !== this.tokens.refresh) this.tokens = { ...this.tokens, refresh: stored };
    const current = this.tokens;
    if (!current) throw sessionEnded();
    let body: { access: string; refresh?: string };
    try {
      body = await unwrap(publicClient.POST('/auth/jwt/refresh/', { body: { refresh: current.refresh } }));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 400)) {
        this.expire();
        throw sessionEnded();
      }
      throw error;
    }
    if (this.tokens !== current) throw sessionEnded(); // signed out (or in again) meanwhile
    this.keep({ access: body.access, refresh: body.refresh ?? current.refresh, receivedAt: Date.now() });
    return body.access;
  }

  /**
   * Acts in another organization from now on: `POST /auth/jwt/switch/` with the current access token,
   * then the new pair is kept and the previous refresh token revoked. With `before`, that is first
   * done with the current tokens (which still act in the organization being left): leaving it, whose
   * tokens stop working there.
   */
  async switchOrganization(organizationId: string, before?: () => Promise<unknown>): Promise<void> {
    const current = await this.accessToken();
    const headers = { Authorization: `Bearer ${current}` };
    const pair = await unwrap(
      publicClient.POST('/auth/jwt/switch/', { body: { organization_id: organizationId }, headers }),
    );
    if (before) {
      try {
        await before();
      } catch (error) {
        await publicClient.POST('/auth/jwt/logout/', { body: { refresh: pair.refresh } }).catch(() => undefined);
        throw error;
      }
    }
    // Another tab must not write its refresh of the old sign-in over the new one: same lock as a refresh.
    const previous = await withRefreshLock(() => {
      const stored = readStoredRefresh() ?? this.tokens?.refresh;
      if (this.tokens) this.keep({ access: pair.access, refresh: pair.refresh, receivedAt: Date.now() });
      return Promise.resolve(stored);
    });
    if (previous) await publicClient.POST('/auth/jwt/logout/', { body: { refresh: previous } }).catch(() => undefined);
  }

  private keep(tokens: Tokens): void {
    this.tokens = tokens;
    localStorage.setItem(STORAGE_KEY, tokens.refresh);
    this.organization.set(organizationOf(tokens.refresh));
    this.schedule();
  }

  private end(notice: string): void {
    this.tokens = null;
    this.organization.set(null);
    localStorage.removeItem(STORAGE_KEY);
    window.clearTimeout(this.timer);
    this.state.set({ signedIn: false, notice });
  }

  private adoptFromOtherTab(): void {
    const stored = readStoredRefresh();
    if (!stored) {
      if (this.tokens) {
        this.tokens = null;
        window.clearTimeout(this.timer);
        this.state.set({ signedIn: false, notice: 'You signed out in another tab.' });
      }
      return;
    }
    const organization = organizationOf(stored);
    if (this.tokens && organization === this.organization.get()) {
      // Rotated by the other tab: this tab's access token stays good until it expires.
      this.tokens = { ...this.tokens, refresh: stored };
      return;
    }
    // Signed in, or switched to another organization, in the other tab: this one follows.
    this.tokens = { access: null, refresh: stored, receivedAt: 0 };
    this.organization.set(organization);
    this.state.set({ signedIn: true });
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    if (!this.tokens?.access) return;
    const delay = Math.min(Math.max(this.msLeft() - this.margin(), 0), 2 ** 31 - 1);
    this.timer = window.setTimeout(() => {
      this.refresh().catch(() => {
        // The service was unreachable: try again soon, unless the session ended.
        if (this.tokens) this.timer = window.setTimeout(() => this.schedule(), RETRY_MS);
      });
    }, delay);
  }

  /**
   * Time left on the access token by this browser's clock: its lifetime (exp - iat) counted from when it
   * arrived. Comparing exp with a clock that runs ahead would refresh in a loop.
   */
  private msLeft(): number {
    if (!this.tokens?.access) return Number.POSITIVE_INFINITY;
    const claims = decodeClaims(this.tokens.access);
    if (!claims?.exp) return Number.POSITIVE_INFINITY; // not readable: the server will say, and a 401 refreshes
    if (!claims.iat) return claims.exp * 1000 - Date.now();
    return this.tokens.receivedAt + (claims.exp - claims.iat) * 1000 - Date.now();
  }

  /** Refresh a minute early, or a quarter of the lifetime early for short-lived tokens. */
  private margin(): number {
    const claims = this.tokens?.access ? decodeClaims(this.tokens.access) : null;
    const lifetime = claims?.exp && claims.iat ? (claims.exp - claims.iat) * 1000 : 30 * 60_000;
    return Math.min(60_000, lifetime / 4);
  }
}

function sessionEnded(): ApiError {
  return new ApiError(401, EXPIRED_NOTICE, {}, 'session_expired');
}

/** Tabs refresh one at a time where the browser has Web Locks; elsewhere, as before, each on its own. */
function withRefreshLock<T>(task: () => Promise<T>): Promise<T> {
  const locks = (navigator as Partial<Navigator>).locks;
  return locks ? locks.request(REFRESH_LOCK, task) : task();
}

function readStoredRefresh(): string | null {
  try {
    const stored = localStorage.getItem(STORAGE_KEY);
    if (stored) return stored;
    // An earlier version kept the access token here too: keep the refresh token, drop the rest.
    const legacy = JSON.parse(localStorage.getItem(LEGACY_STORAGE_KEY) ?? 'null') as { refresh?: unknown } | null;
    localStorage.removeItem(LEGACY_STORAGE_KEY);
    if (legacy && typeof legacy.refresh === 'string') {
      localStorage.setItem(STORAGE_KEY, legacy.refresh);
      return legacy.refresh;
    }
    return null;
  } catch {
    return null;
  }
}

/** The organization a token acts in, read only to follow switches: the server is what verifies it. */
function organizationOf(token: string): string | null {
  const claimed = decodeClaims(token)?.organization_id;
  return typeof claimed === 'string' ? claimed : null;
}

/** The token's claims, read only for its timing and organization: the server is what verifies it. */
function decodeClaims(token: string): { exp?: number; iat?: number; organization_id?: unknown } | null {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload)) as { exp?: number; iat?: number; organization_id?: unknown };
  } catch {
    return null;
  }
}

export const session = new Session();
