import { Injectable } from '@nestjs/common';
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

const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

/**
 * Active accounts by id, cached briefly: a verified token already proves who is calling, and a
 * database read per request would halve throughput (JWT checks and `GET /auth/users/me/` both read
 * it). Role changes show within TTL_MS, or at once on the instance that makes them (`forget`).
 */
@Injectable()
export class AccountCache {
  private readonly cache = new Map<string, { account: Account | null; storedAt: number }>();

  constructor(private readonly users: UsersRepository) {}

  async get(userId: string): Promise<Account | null> {
    const cached = this.cache.get(userId);
    if (cached && Date.now() - cached.storedAt < TTL_MS) return cached.account;
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
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(userId, { account, storedAt: Date.now() });
    return account;
  }

  forget(userId: string): void {
    this.cache.delete(userId);
  }
}
