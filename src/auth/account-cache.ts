import { Injectable } from '@nestjs/common';
import { BoundedCache } from '../common/bounded-cache.js';
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
export const ACCOUNT_CACHE_MAX_ENTRIES = 50_000;

/**
 * Active accounts by id, cached briefly: a verified token already proves who is calling, and a
 * database read per request would halve throughput (JWT checks and `GET /auth/users/me/` both read
 * it). Role changes show within ACCOUNT_CACHE_TTL_MS, or at once on the instance that makes them
 * (`forget`): a read that started before `forget` does not store what it read.
 */
@Injectable()
export class AccountCache {
  private readonly cache = new BoundedCache<string, Account | null>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });

  constructor(private readonly users: UsersRepository) {}

  async get(userId: string): Promise<Account | null> {
    const cached = this.cache.get(userId);
    if (cached !== undefined) return cached;
    const generationAtLookup = this.cache.generation;
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
    this.cache.set(userId, account, { generationAtLookup });
    return account;
  }

  get size(): number {
    return this.cache.size;
  }

  forget(userId: string): void {
    this.cache.delete(userId);
  }
}
