import { Injectable } from '@nestjs/common';
import { KeyChangeListener } from '../api-keys/key-change-listener.js';
import { BoundedCache } from '../common/bounded-cache.js';
import { SharedLookups } from '../common/shared-lookups.js';
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
  private readonly cache = new BoundedCache<string, { role: TeamRole; joinedAtSecond: number } | null>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });
  /** An expired role's burst of requests (every request reads it) shares one read. */
  private readonly lookups = new SharedLookups<string, { role: TeamRole; joinedAtSecond: number } | null>();
  /** Each user's organizations, for `GET /auth/users/me/`. */
  private readonly organizationLists = new BoundedCache<string, OrganizationOfUserRow[]>({
    maxEntries: ACCOUNT_CACHE_MAX_ENTRIES,
    ttlMs: ACCOUNT_CACHE_TTL_MS,
  });
  /**
   * The list last read for each user, answered only while the database cannot answer: not cleared when
   * the change listener reconnects (its entries would then live a second), only by a membership change.
   */
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
        const userId = payload.slice(payload.indexOf(':') + 1);
        this.organizationLists.delete(userId);
        this.lastOrganizationLists.delete(userId);
      },
      setSynced: (synced) => {
        this.synced = synced;
        if (synced) {
          this.cache.clear();
          this.organizationLists.clear();
        }
      },
    });
  }

  /**
   * The user's role in the organization now; null when not a member. With `issuedAtSecond` (a token's
   * `iat`), also null when the membership began after the token was issued: a token from an earlier
   * membership (one that ended by a removal or a leave) does not act again when the user joins again.
   */
  async roleOf(organizationId: string, userId: string, issuedAtSecond?: number): Promise<TeamRole | null> {
    const membership = await this.membershipOf(organizationId, userId);
    if (!membership) return null;
    // Every token this service signs carries `iat`.
    if (issuedAtSecond !== undefined && Number.isFinite(issuedAtSecond) && issuedAtSecond < membership.joinedAtSecond)
      return null;
    return membership.role;
  }

  private async membershipOf(
    organizationId: string,
    userId: string,
  ): Promise<{ role: TeamRole; joinedAtSecond: number } | null> {
    const key = `${organizationId}:${userId}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const generationAtLookup = this.cache.generation;
    return this.lookups.run(key, generationAtLookup, async () => {
      const membership = await this.memberships.membershipOf(organizationId, userId);
      this.cache.set(key, membership, {
        generationAtLookup,
        ttlMs: this.synced ? ACCOUNT_CACHE_TTL_MS : UNSYNCED_ACCOUNT_CACHE_TTL_MS,
      });
      return membership;
    });
  }

  forget(organizationId: string, userId: string): void {
    this.cache.delete(`${organizationId}:${userId}`);
    this.organizationLists.delete(userId);
    this.lastOrganizationLists.delete(userId);
  }

  /**
   * Every organization the user belongs to (`GET /auth/users/me/`), cached as the role is and forgotten
   * with it on a membership change, so `me` needs no statement of its own and answers through a database
   * outage; a renamed organization shows its new name here within the cache's lifetime.
   */
  async organizationsOf(userId: string): Promise<OrganizationOfUserRow[]> {
    const cached = this.organizationLists.get(userId);
    if (cached) return cached;
    const generationAtLookup = this.organizationLists.generation;
    const lastGenerationAtLookup = this.lastOrganizationLists.generation;
    let organizations: OrganizationOfUserRow[];
    try {
      organizations = await this.memberships.organizationsOf(userId);
    } catch (error) {
      const last = this.lastOrganizationLists.get(userId);
      if (last) return last;
      throw error;
    }
    this.lastOrganizationLists.set(userId, organizations, { generationAtLookup: lastGenerationAtLookup });
    this.organizationLists.set(userId, organizations, {
      generationAtLookup,
      ttlMs: this.synced ? ACCOUNT_CACHE_TTL_MS : UNSYNCED_ACCOUNT_CACHE_TTL_MS,
    });
    return organizations;
  }

  get size(): number {
    return this.cache.size;
  }
}
