import { LRUCache } from 'lru-cache';

/**
 * Counts invalidations. A lookup reads it before going to the database and hands it back when storing
 * what it found, so a value read before an invalidation is never stored after it. Caches that are
 * invalidated together share one.
 */
export class Generation {
  private count = 0;

  get current(): number {
    return this.count;
  }

  advance(): void {
    this.count++;
  }
}

export interface BoundedCacheOptions {
  /** Past this many entries the least recently used one is dropped. */
  maxEntries: number;
  /** How long an entry lives after it is stored, unless `set` gives its own; none when omitted. */
  ttlMs?: number;
  generation?: Generation;
}

export interface StoreOptions {
  /** `generation` as read before the lookup; omitted only for values no invalidation can make wrong. */
  generationAtLookup?: number;
  ttlMs?: number;
}

/** A size-capped LRU with expiry (lru-cache) whose invalidations advance a `Generation`. */
export class BoundedCache<K extends string | number | object, V> {
  // Wrapped because lru-cache holds no null, and a cached "no such account" is one.
  private readonly entries: LRUCache<K, { value: V }>;
  private readonly generations: Generation;

  constructor({ maxEntries, ttlMs, generation = new Generation() }: BoundedCacheOptions) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
    this.generations = generation;
  }

  get generation(): number {
    return this.generations.current;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Stores the value unless something was invalidated since `generationAtLookup` was read. */
  set(key: K, value: V, { generationAtLookup, ttlMs }: StoreOptions = {}): void {
    if (generationAtLookup !== undefined && generationAtLookup !== this.generations.current) return;
    this.entries.set(key, { value }, { ttl: ttlMs });
  }

  delete(key: K): void {
    this.generations.advance();
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (a scan: invalidations are rare, lookups are not). */
  deleteWhere(matches: (value: V) => boolean): void {
    this.generations.advance();
    const doomed: K[] = [];
    for (const [key, entry] of this.entries.entries()) if (matches(entry.value)) doomed.push(key);
    for (const key of doomed) this.entries.delete(key);
  }

  clear(): void {
    this.generations.advance();
    this.entries.clear();
  }
}
