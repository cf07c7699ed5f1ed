import { Injectable } from '@nestjs/common';
import { KeyChangeListener } from '../api-keys/key-change-listener.js';
import { BoundedCache } from '../common/bounded-cache.js';
import type { TeamRole } from '../common/roles.js';
import {
  MEMBERSHIP_CHANGE_CHANNEL,
  MembershipsRepository,
  type OrganizationOfUserRow,
} from '../organizations/memberships.repository.js';
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
  /** Each user's organizations as last read: `GET /auth/users/me/` answers them while the database is down. */
  private readonly lastOrganizationLists = new BoundedCache<string, OrganizationOfUserRow[]>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });
  private synced = false;

  constructor(
    private readonly memberships: MembershipsRepository,
    changes: KeyChangeListener,
  ) {
    changes.subscribe(MEMBERSHIP_CHANGE_CHANNEL, {
      changed: (payload) => {
        this.cache.delete(payload);
        this.lastOrganizationLists.delete(payload.slice(payload.indexOf(':') + 1));
      },
      setSynced: (synced) => {
        this.synced = synced;
        if (synced) {
          this.cache.clear();
          this.lastOrganizationLists.clear();
        }
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
    this.lastOrganizationLists.delete(userId);
  }

  /**
   * Every organization the user belongs to, read fresh (a rename shows at once); while the database
   * cannot answer, the list last read within the account cache's lifetime, so that `me` keeps answering
   * through an outage as the credential check does. A membership change forgets it, as it does the role.
   */
  async organizationsOf(userId: string): Promise<OrganizationOfUserRow[]> {
    try {
      const organizations = await this.memberships.organizationsOf(userId);
      this.lastOrganizationLists.set(userId, organizations);
      return organizations;
    } catch (error) {
      const last = this.lastOrganizationLists.get(userId);
      if (last) return last;
      throw error;
    }
  }

  get size(): number {
    return this.cache.size;
  }
}
