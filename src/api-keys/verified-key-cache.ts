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
/** While every change reaches us through LISTEN/NOTIFY an entry may live this long... */
const SYNCED_TTL_MS = 60_000;
/** ...otherwise this short, which bounds how late another instance's revocation takes effect here. */
const UNSYNCED_TTL_MS = 1_000;

/**
 * Verified keys by hash. Revocation, rotation and expiry changes invalidate by key id, locally at once
 * and on other instances through the change listener. The generation counter stops a lookup that
 * started before an invalidation from caching what it read.
 */
@Injectable()
export class VerifiedKeyCache {
  private readonly entries = new Map<string, { grant: KeyGrant; storedAt: number }>();
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

  get(hash: string, now = Date.now()): KeyGrant | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (now - entry.storedAt > (this.synced ? SYNCED_TTL_MS : UNSYNCED_TTL_MS)) {
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

  invalidateKey(keyId: string): void {
    this.generationCounter++;
    for (const [hash, entry] of this.entries) {
      if (entry.grant.keyId === keyId) this.entries.delete(hash);
    }
  }

  clear(): void {
    this.generationCounter++;
    this.entries.clear();
  }
}
