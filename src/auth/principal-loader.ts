import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../common/principal.js';

const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

/**
 * The principal behind a JWT's `user_id`. Cached briefly: a token is already proof of identity, and a
 * database read on every request would halve throughput. Role changes show within TTL_MS.
 */
@Injectable()
export class PrincipalLoader {
  private readonly cache = new Map<string, { principal: Principal | null; storedAt: number }>();

  constructor(private readonly dataSource: DataSource) {}

  async forUser(userId: string): Promise<Principal | null> {
    const cached = this.cache.get(userId);
    if (cached && Date.now() - cached.storedAt < TTL_MS) return cached.principal;
    const rows: { id: string; organization_id: string; is_admin: boolean }[] = await this.dataSource.query(
      'SELECT id, organization_id, is_admin FROM users WHERE id = $1 AND is_active AND organization_id IS NOT NULL',
      [userId],
    );
    const row = rows[0];
    const principal: Principal | null = row
      ? { kind: 'jwt', userId: row.id, organizationId: row.organization_id, isAdmin: row.is_admin, apiKeyId: null, keyPrefix: null }
      : null;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(userId, { principal, storedAt: Date.now() });
    return principal;
  }

  forget(userId: string): void {
    this.cache.delete(userId);
  }
}
