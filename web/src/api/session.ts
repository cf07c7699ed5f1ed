import { createStore } from '../lib/store';
import { ApiError } from './http';
import { publicClient, unwrap } from './public';

interface Tokens {
  access: string;
  refresh: string;
  /** When this browser received the access token (its own clock), so skew with the server's does not matter. */
  receivedAt: number;
}

export type AuthState = { signedIn: true } | { signedIn: false; notice?: string };

export const EXPIRED_NOTICE = 'Your session has expired. Please sign in again.';
const STORAGE_KEY = 'kqs.session';
const RETRY_MS = 15_000;

/**
 * The JWT pair of the signed-in person, kept in localStorage so a reload or a second tab stays signed
 * in. The access token is refreshed shortly before it expires (and on demand after a 401); when the
 * refresh token is refused, the session ends and sign-in says why.
 */
class Session {
  readonly state = createStore<AuthState>({ signedIn: false });
  private tokens: Tokens | null = null;
  private refreshing: Promise<string> | null = null;
  private timer: number | undefined;

  start(): void {
    this.tokens = readStored();
    this.state.set(this.tokens ? { signedIn: true } : { signedIn: false });
    this.schedule();
    window.addEventListener('storage', (event) => {
      if (event.key === STORAGE_KEY) this.adoptFromOtherTab();
    });
    // Timers stall while a laptop sleeps: check again when the page is looked at.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.tokens && this.msLeft() < this.margin()) {
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

  expire(): void {
    if (this.tokens) this.end(EXPIRED_NOTICE);
  }

  /** A usable access token, refreshed first when it is about to expire. */
  async accessToken(): Promise<string> {
    if (!this.tokens) throw sessionEnded();
    if (this.msLeft() < 10_000) return this.refresh();
    return this.tokens.access;
  }

  /** One refresh at a time, however many requests ask for it. */
  refresh(): Promise<string> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<string> {
    const current = this.tokens;
    if (!current) throw sessionEnded();
    let access: string;
    try {
      ({ access } = await unwrap(publicClient.POST('/auth/jwt/refresh/', { body: { refresh: current.refresh } })));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 400)) {
        this.expire();
        throw sessionEnded();
      }
      throw error;
    }
    if (this.tokens !== current) throw sessionEnded(); // signed out (or in again) meanwhile
    this.keep({ ...current, access, receivedAt: Date.now() });
    return access;
  }

  private keep(tokens: Tokens): void {
    this.tokens = tokens;
    localStorage.setItem(STORAGE_KEY, JSON.stringify(tokens));
    this.schedule();
  }

  private end(notice: string): void {
    this.tokens = null;
    localStorage.removeItem(STORAGE_KEY);
    window.clearTimeout(this.timer);
    this.state.set({ signedIn: false, notice });
  }

  private adoptFromOtherTab(): void {
    const stored = readStored();
    if (!stored) {
      if (this.tokens) {
        this.tokens = null;
        window.clearTimeout(this.timer);
        this.state.set({ signedIn: false, notice: 'You signed out in another tab.' });
      }
      return;
    }
    const wasSignedIn = this.tokens !== null;
    this.tokens = stored;
    this.schedule();
    if (!wasSignedIn) this.state.set({ signedIn: true });
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    if (!this.tokens) return;
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
    if (!this.tokens) return Number.POSITIVE_INFINITY;
    const claims = decodeClaims(this.tokens.access);
    if (!claims?.exp) return Number.POSITIVE_INFINITY; // not readable: the server will say, and a 401 refreshes
    if (!claims.iat) return claims.exp * 1000 - Date.now();
    return this.tokens.receivedAt + (claims.exp - claims.iat) * 1000 - Date.now();
  }

  /** Refresh a minute early, or a quarter of the lifetime early for short-lived tokens. */
  private margin(): number {
    const claims = this.tokens ? decodeClaims(this.tokens.access) : null;
    const lifetime = claims?.exp && claims.iat ? (claims.exp - claims.iat) * 1000 : 30 * 60_000;
    return Math.min(60_000, lifetime / 4);
  }
}

function sessionEnded(): ApiError {
  return new ApiError(401, EXPIRED_NOTICE, {}, 'session_expired');
}

function readStored(): Tokens | null {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Tokens> | null;
    return value && typeof value.access === 'string' && typeof value.refresh === 'string'
      ? { access: value.access, refresh: value.refresh, receivedAt: typeof value.receivedAt === 'number' ? value.receivedAt : 0 }
      : null;
  } catch {
    return null;
  }
}

/** The token's claims, read only for its timing: the server is what verifies it. */
function decodeClaims(token: string): { exp?: number; iat?: number } | null {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload)) as { exp?: number; iat?: number };
  } catch {
    return null;
  }
}

export const session = new Session();
