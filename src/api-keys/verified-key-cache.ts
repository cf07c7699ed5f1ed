import { Injectable } from '@nestjs/common';

/** What a verified key grants, cached so that a known key costs no database round trip. */
export interface KeyGrant {
  keyId: string;
  userId: string;
  organizationId: string;
  keyPrefix: string;
  /** Epoch ms after which the key stops working (expiry or end of a rotation's grace), or null. */
  usableUntil: number | null;
}

const MAX_ENTRIES = 50_000;
/** Hashes known to match no usable key: enough to absorb a flood, small enough to hold (~1.5 MB). */
const MAX_UNKNOWN = 10_000;
/** While every change reaches us through LISTEN/NOTIFY an entry may live this long... */
const SYNCED_TTL_MS = 60_000;
/** ...otherwise this short, which bounds how late another instance's revocation takes effect here. */
const UNSYNCED_TTL_MS = 1_000;

/**
 * Verified keys by hash. Revocation, rotation and expiry changes invalidate by key id, locally at once
 * and on other instances through the change listener. The generation counter stops a lookup that
 * started before an invalidation from caching what it read.
 *
 * Also hashes that matched no usable key, so that a forged key with a valid checksum (CRC32 is public)
 * costs one database lookup however often it is sent. Any key change (creation included, announced
 * like the others) forgets them all: a key created meanwhile could be one of them.
 */
@Injectable()
export class VerifiedKeyCache {
  private readonly entries = new Map<string, { grant: KeyGrant; storedAt: number }>();
  private readonly unknown = new Map<string, number>();
  private generationCounter = 0;
  private synced = false;

  get generation(): number {
    return this.generationCounter;
  }

  /** Whether changes made by other instances are known to reach us (set by the change listener). */
  setSynced(synced: boolean): void {
    this.synced = synced;
    this.clear();
  }

  private get ttl(): number {
    return this.synced ? SYNCED_TTL_MS : UNSYNCED_TTL_MS;
  }

  get(hash: string, now = Date.now()): KeyGrant | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (now - entry.storedAt > this.ttl) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.grant;
  }

  /** Stores the grant unless something was invalidated since `generationAtLookup` was read. */
  set(hash: string, grant: KeyGrant, generationAtLookup: number): void {
    if (generationAtLookup !== this.generationCounter) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { grant, storedAt: Date.now() });
  }

  /** Whether this hash recently matched no usable key. */
  isUnknown(hash: string, now = Date.now()): boolean {
    const storedAt = this.unknown.get(hash);
    if (storedAt === undefined) return false;
    if (now - storedAt <= this.ttl) return true;
    this.unknown.delete(hash);
    return false;
  }

  /** Records a hash that matched nothing, unless a key changed since `generationAtLookup`. */
  setUnknown(hash: string, generationAtLookup: number): void {
    if (generationAtLookup !== this.generationCounter) return;
    if (this.unknown.size >= MAX_UNKNOWN) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(hash, Date.now());
  }

  get unknownCount(): number {
    return this.unknown.size;
  }

  invalidateKey(keyId: string): void {
    this.generationCounter++;
    this.unknown.clear();
    for (const [hash, entry] of this.entries) {
      if (entry.grant.keyId === keyId) this.entries.delete(hash);
    }
  }

  clear(): void {
    this.generationCounter++;
    this.entries.clear();
    this.unknown.clear();
  }
}
