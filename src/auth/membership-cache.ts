import { Injectable } from '@nestjs/common';
import { KeyChangeListener } from '../api-keys/key-change-listener.js';
import { BoundedCache } from '../common/bounded-cache.js';
import type { TeamRole } from '../common/roles.js';
import { MEMBERSHIP_CHANGE_CHANNEL, MembershipsRepository } from '../organizations/memberships.repository.js';
import { ACCOUNT_CACHE_MAX_ENTRIES, ACCOUNT_CACHE_TTL_MS, UNSYNCED_ACCOUNT_CACHE_TTL_MS } from './account-cache.js';

/**
 * Each user's role in each organization (null: not a member), read on every authenticated request to
 * make its principal, so cached as accounts are. A role change, a removal or a leave is forgotten at
 * once on the instance that makes it (`forget`) and, through the key-change listener's connection
 * (LISTEN `membership_changed`, payload `<organization_id>:<user_id>`), on every other within
 * milliseconds, as a key revocation is: tokens and keys issued before act with the new role, or stop.
 * While that connection is down new entries live UNSYNCED_ACCOUNT_CACHE_TTL_MS (one second), and its
 * return clears them all.
 */
@Injectable()
export class MembershipCache {
  private readonly cache = new BoundedCache<string, TeamRole | null>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });
  private synced = false;

  constructor(
    private readonly memberships: MembershipsRepository,
    changes: KeyChangeListener,
  ) {
    changes.subscribe(MEMBERSHIP_CHANGE_CHANNEL, {
      changed: (payload) => this.cache.delete(payload),
      setSynced: (synced) => {
        this.synced = synced;
        if (synced) this.cache.clear();
      },
    });
  }

  async roleOf(organizationId: string, userId: string): Promise<TeamRole | null> {
    const key = `${organizationId}:${userId}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const generationAtLookup = this.cache.generation;
    const role = await this.memberships.roleOf(organizationId, userId);
    this.cache.set(key, role, {
      generationAtLookup,
      ttlMs: this.synced ? ACCOUNT_CACHE_TTL_MS : UNSYNCED_ACCOUNT_CACHE_TTL_MS,
    });
    return role;
  }

  forget(organizationId: string, userId: string): void {
    this.cache.delete(`${organizationId}:${userId}`);
  }

  get size(): number {
    return this.cache.size;
  }
}
