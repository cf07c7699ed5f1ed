import { Injectable } from '@nestjs/common';
import { KeyChangeListener } from '../api-keys/key-change-listener.js';
import { BoundedCache } from '../common/bounded-cache.js';
import { SharedLookups } from '../common/shared-lookups.js';
import { ACCOUNT_CHANGE_CHANNEL } from './sessions.js';
import { UsersRepository } from './users.repository.js';

/** What a request needs to know of the account behind a credential. */
export interface Account {
  id: string;
  email: string;
  organizationId: string;
  isAdmin: boolean;
  /** Epoch ms before which this account's access tokens are refused, or null. */
  tokensValidAfter: number | null;
}

export const ACCOUNT_CACHE_TTL_MS = 30_000;
/** While account changes may not reach us (the listening connection is down). */
export const UNSYNCED_ACCOUNT_CACHE_TTL_MS = 1_000;
export const ACCOUNT_CACHE_MAX_ENTRIES = 50_000;

/**
 * Active accounts by id, cached briefly: a verified token already proves who is calling, and a
 * database read per request would halve throughput (JWT checks and `GET /auth/users/me/` both read
 * it). Ended sessions (sign-out everywhere, promotion, a new password) are forgotten at once on the
 * instance that ends them (`forget`) and, through the key-change listener's connection (LISTEN
 * `account_changed`), on every other within milliseconds, as a key revocation is; while that
 * connection is down new entries live UNSYNCED_ACCOUNT_CACHE_TTL_MS, and its return clears them all. Other changes (an admin flag) show
 * within ACCOUNT_CACHE_TTL_MS. A read that started before `forget` does not store what it read.
 */
@Injectable()
export class AccountCache {
  private readonly cache = new BoundedCache<string, Account | null>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });
  /** An expired account's burst of requests shares one read. */
  private readonly lookups = new SharedLookups<string, Account | null>();
  private synced = false;

  constructor(
    private readonly users: UsersRepository,
    changes: KeyChangeListener,
  ) {
    changes.subscribe(ACCOUNT_CHANGE_CHANNEL, {
      changed: (userId) => this.forget(userId),
      setSynced: (synced) => {
        this.synced = synced;
        // Notifications sent while the connection was down are lost. Entries are kept when it drops,
        // though: signed-in users keep working through a database outage (see OPERATIONS.md).
        if (synced) this.cache.clear();
      },
    });
  }

  async get(userId: string): Promise<Account | null> {
    const cached = this.cache.get(userId);
    if (cached !== undefined) return cached;
    const generationAtLookup = this.cache.generation;
    return this.lookups.run(userId, generationAtLookup, () => this.load(userId, generationAtLookup));
  }

  private async load(userId: string, generationAtLookup: number): Promise<Account | null> {
    const row = await this.users.findAccount(userId);
    const account: Account | null = row
      ? {
          id: row.id,
          email: row.email,
          organizationId: row.organization_id,
          isAdmin: row.is_admin,
          tokensValidAfter: row.tokens_valid_after ? row.tokens_valid_after.getTime() : null,
        }
      : null;
    this.cache.set(userId, account, {
      generationAtLookup,
      ttlMs: this.synced ? ACCOUNT_CACHE_TTL_MS : UNSYNCED_ACCOUNT_CACHE_TTL_MS,
    });
    return account;
  }

  get size(): number {
    return this.cache.size;
  }

  forget(userId: string): void {
    this.cache.delete(userId);
  }
}
