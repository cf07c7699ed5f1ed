import { toIsoMicros } from '../common/timestamps.js';
import type { ApiKey } from './api-key.entity.js';
import { ApiKeyResponse, type CreatedApiKeyResponse, type RotatedApiKeyResponse } from './dto/api-key.response.js';

/** The record, with the full key when created, and the replaced key's id too when rotated. */
export type ApiKeyRecord = ApiKeyResponse | CreatedApiKeyResponse | RotatedApiKeyResponse;

/** A key is active while it is neither revoked, rotated away, nor past its expiry. */
export function isKeyActive(key: ApiKey, now = Date.now()): boolean {
  return key.isActive && key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now);
}

/** What the owner can change, as the record shows it (the audit log's `changes` compare these). */
export function presentChangeable(key: ApiKey) {
  return {
    name: key.name,
    expires_at: toIsoMicros(key.expiresAt),
    scopes: key.scopes,
    rate_limit_per_minute: key.rateLimitPerMinute,
    monthly_credit_limit: key.monthlyCreditLimit,
    metadata: key.metadata,
    collection_ids: key.collectionIds,
  };
}

/** The spec's record (2.1) with the partner settings; `key` and `rotated_from` only when the caller passes them. */
export function presentApiKey(
  key: ApiKey,
  extras: { lastUsedAt?: Date; fullKey?: string; rotatedFrom?: string; creditsUsed?: number } = {},
): ApiKeyRecord {
  // This instance's unwritten use, unless the stored one (perhaps another instance's) is later.
  const stored = key.lastUsedAt;
  const lastUsedAt =
    extras.lastUsedAt && (!stored || extras.lastUsedAt.getTime() > stored.getTime()) ? extras.lastUsedAt : stored;
  return Object.assign(new ApiKeyResponse(), {
    id: key.id,
    name: key.name,
    key_prefix: key.keyPrefix,
    is_active: isKeyActive(key),
    last_used_at: toIsoMicros(lastUsedAt ?? null),
    created_at: toIsoMicros(key.createdAt),
    expires_at: toIsoMicros(key.expiresAt),
    scopes: key.scopes,
    rate_limit_per_minute: key.rateLimitPerMinute,
    monthly_credit_limit: key.monthlyCreditLimit,
    credits_used_this_period: extras.creditsUsed ?? 0,
    metadata: key.metadata,
    collection_ids: key.collectionIds,
    replaced_by: key.replacedById,
    grace_until: toIsoMicros(key.graceUntil),
    ...(extras.fullKey === undefined ? {} : { key: extras.fullKey }),
    ...(extras.rotatedFrom === undefined ? {} : { rotated_from: extras.rotatedFrom }),
  });
}
