import type { ApiKeyScope } from '../common/scopes.js';

/** A key's metadata: a flat object of strings and numbers, for the partner's own bookkeeping. */
export type KeyMetadata = Record<string, string | number>;

/** What a partner sets on a key beside its name; rotation copies all of it. */
export interface KeySettings {
  scopes: ApiKeyScope[] | null;
  rateLimitPerMinute: number | null;
  monthlyCreditLimit: number | null;
  metadata: KeyMetadata;
  /** The collections the key may reach; null: every collection of its organization. */
  collectionIds: string[] | null;
}

export const RATE_LIMIT_PER_MINUTE_MAX = 1_000_000;
/** The counter is a PostgreSQL `integer`. */
export const MONTHLY_CREDIT_LIMIT_MAX = 2 ** 31 - 1;
/** Metadata is for labels (customer id, environment), not storage: small enough to cache with every key. */
export const METADATA_MAX_KEYS = 16;
export const METADATA_KEY_MAX_LENGTH = 40;
export const METADATA_MAX_BYTES = 1024;

export const DEFAULT_KEY_SETTINGS: KeySettings = {
  scopes: null,
  rateLimitPerMinute: null,
  monthlyCreditLimit: null,
  metadata: {},
  collectionIds: null,
};
