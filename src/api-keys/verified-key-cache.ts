import { Injectable } from '@nestjs/common';
import { BoundedCache, Generation } from '../common/bounded-cache.js';
import type { ApiKeyScope } from '../common/scopes.js';

/** What a verified key grants, cached so that a known key costs no database round trip. */
export interface KeyGrant {
  keyId: string;
  userId: string;
  organizationId: string;
  keyPrefix: string;
  /** Epoch ms after which the key stops working (expiry or end of a rotation's grace), or null. */
  usableUntil: number | null;
  /** Checked on every request from here: a settings change invalidates the grant like a revocation. */
  scopes: readonly ApiKeyScope[] | null;
  rateLimitPerMinute: number | null;
  /** The collections the key is limited to; null: every collection of its organization. */
  collectionIds: readonly string[] | null;
}

export const VERIFIED_KEYS_MAX_ENTRIES = 50_000;
/** Hashes known to match no usable key: enough to absorb a flood, small enough to hold (~1.5 MB). */
export const UNKNOWN_KEYS_MAX_ENTRIES = 10_000;
/** While every change reaches us through LISTEN/NOTIFY an entry may live this long... */
const SYNCED_TTL_MS = 60_000;
/** ...otherwise this short, which bounds how late another instance's revocation takes effect here. */
const UNSYNCED_TTL_MS = 1_000;

/**
 * Verified keys by hash. Revocation, rotation and any update (expiry, scopes, limits) invalidate by key id, locally at once
 * and on other instances through the change listener. The generation stops a lookup that started
 * before an invalidation from caching what it read.
 *
 * Also hashes that matched no usable key, so that a forged key with a valid checksum (CRC32 is public)
 * costs one database lookup however often it is sent. Any key change (creation included, announced
 * like the others) forgets them all: a key created meanwhile could be one of them. The two share one
 * generation, and are capped apart so that a flood of forged keys cannot push out the real ones.
 */
@Injectable()
export class VerifiedKeyCache {
  private readonly generations = new Generation();
  private readonly grants = new BoundedCache<string, KeyGrant>({
    maxEntries: VERIFIED_KEYS_MAX_ENTRIES,
    generation: this.generations,
  });
  private readonly unknown = new BoundedCache<string, true>({
    maxEntries: UNKNOWN_KEYS_MAX_ENTRIES,
    generation: this.generations,
  });
  private synced = false;

  get generation(): number {
    return this.generations.current;
  }

  /** Whether changes made by other instances are known to reach us (set by the change listener). */
  setSynced(synced: boolean): void {
    this.synced = synced;
    this.clear();
  }

  private get ttlMs(): number {
    return this.synced ? SYNCED_TTL_MS : UNSYNCED_TTL_MS;
  }

  get(hash: string): KeyGrant | undefined {
    return this.grants.get(hash);
  }

  /** Stores the grant unless something was invalidated since `generationAtLookup` was read. */
  set(hash: string, grant: KeyGrant, generationAtLookup: number): void {
    this.grants.set(hash, grant, { generationAtLookup, ttlMs: this.ttlMs });
  }

  /** Whether this hash recently matched no usable key. */
  isUnknown(hash: string): boolean {
    return this.unknown.get(hash) !== undefined;
  }

  /** Records a hash that matched nothing, unless a key changed since `generationAtLookup`. */
  setUnknown(hash: string, generationAtLookup: number): void {
    this.unknown.set(hash, true, { generationAtLookup, ttlMs: this.ttlMs });
  }

  get size(): number {
    return this.grants.size;
  }

  get unknownCount(): number {
    return this.unknown.size;
  }

  invalidateKey(keyId: string): void {
    this.unknown.clear();
    this.grants.deleteWhere((grant) => grant.keyId === keyId);
  }

  clear(): void {
    this.grants.clear();
    this.unknown.clear();
  }
}
