import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { BadRequestError, NotFoundError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { preciseNow, toIsoMicros } from '../common/timestamps.js';
import { ApiKey } from './api-key.entity.js';
import { type ApiKeyRecord, isKeyActive, presentApiKey } from './api-key.presenter.js';
import { announceKeyChange } from './key-change-listener.js';
import { generateApiKey } from './key-format.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { VerifiedKeyCache } from './verified-key-cache.js';

/** The list answers the newest keys only (revoked ones stay listed, so it would otherwise grow forever). */
export const KEY_LIST_MAX = 1000;

export const NOT_ACTIVE = 'This API key is revoked, rotated or expired; only an active key can be changed or rotated.';

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cache: VerifiedKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async list(userId: string): Promise<ApiKeyRecord[]> {
    const keys = await this.dataSource.getRepository(ApiKey).find({ where: { userId }, order: { createdAt: 'DESC' }, take: KEY_LIST_MAX });
    return keys.map((key) => presentApiKey(key, { lastUsedAt: this.lastUsed.pendingFor(key.id) }));
  }

  async create(owner: Principal, name: string): Promise<ApiKeyRecord> {
    const { key, record } = await this.insertKey(this.dataSource.manager, owner.userId, owner.organizationId, { name, expiresAt: null });
    // Every instance forgets the hashes it knows to match nothing: this key could be one of them.
    this.cache.invalidateKey(record.id);
    await announceKeyChange(this.dataSource.manager, record.id);
    return presentApiKey(record, { fullKey: key });
  }

  async updateExpiry(userId: string, keyId: string, expiresAt: Date | null): Promise<ApiKeyRecord> {
    const updated = await this.changeActiveKey(userId, keyId, async (manager, key) => {
      await manager.update(ApiKey, { id: key.id }, { expiresAt });
      return Object.assign(key, { expiresAt });
    });
    return presentApiKey(updated, { lastUsedAt: this.lastUsed.pendingFor(keyId) });
  }

  /**
   * Replaces an active key. The row lock makes concurrent rotations of one key queue up: the first
   * issues the new key, the others then find the old key inactive and get a 400.
   */
  async rotate(userId: string, keyId: string, gracePeriodSeconds: number): Promise<ApiKeyRecord> {
    let fullKey = '';
    const replacement = await this.changeActiveKey(userId, keyId, async (manager, old) => {
      const { key, record } = await this.insertKey(manager, old.userId, old.organizationId, {
        name: old.name,
        expiresAt: old.expiresAt,
        rotatedFromId: old.id,
      });
      fullKey = key;
      // The grace period never outlives the old key's own expiry.
      await manager.query(
        `UPDATE api_keys SET is_active = false, replaced_by_id = $2,
                grace_until = CASE WHEN $3::int > 0
                  THEN LEAST(now() + make_interval(secs => $3::int), COALESCE(expires_at, 'infinity')) END
          WHERE id = $1`,
        [old.id, record.id, gracePeriodSeconds],
      );
      return record;
    });
    return presentApiKey(replacement, { fullKey, rotatedFrom: keyId });
  }

  /** Idempotent: revoking a revoked key changes nothing. A rotated-away key loses its grace period. */
  async revoke(userId: string, keyId: string): Promise<ApiKeyRecord> {
    const revoked = await this.withLockedKey(userId, keyId, async (manager, key) => {
      if (key.revokedAt !== null) return key;
      await manager.query(
        `UPDATE api_keys SET is_active = false, revoked_at = now(), grace_until = NULL WHERE id = $1`,
        [key.id],
      );
      return (await manager.findOneByOrFail(ApiKey, { id: key.id }))!;
    });
    return presentApiKey(revoked, { lastUsedAt: this.lastUsed.pendingFor(keyId) });
  }

  private async insertKey(
    manager: EntityManager,
    userId: string,
    organizationId: string,
    settings: Pick<ApiKey, 'name' | 'expiresAt'> & Partial<Pick<ApiKey, 'rotatedFromId'>>,
  ): Promise<{ key: string; record: ApiKey }> {
    const generated = generateApiKey();
    // A SQL literal: pg would send a Date with milliseconds only (see preciseNow).
    const createdAt = toIsoMicros(preciseNow());
    const { identifiers } = await manager.insert(ApiKey, {
      userId,
      organizationId,
      keyPrefix: generated.prefix,
      keyHash: generated.hash,
      ...settings,
      createdAt: () => `'${createdAt}'::timestamptz`,
    });
    const record = await manager.findOneByOrFail(ApiKey, { id: identifiers[0].id as string });
    return { key: generated.key, record };
  }

  private changeActiveKey(
    userId: string,
    keyId: string,
    change: (manager: EntityManager, key: ApiKey) => Promise<ApiKey>,
  ): Promise<ApiKey> {
    return this.withLockedKey(userId, keyId, (manager, key) => {
      if (!isKeyActive(key)) throw new BadRequestError(NOT_ACTIVE);
      return change(manager, key);
    });
  }

  /**
   * Runs a change on the caller's own key under a row lock, tells every instance about it on commit,
   * and drops it from this instance's cache. Someone else's key is a 404, like a missing one.
   */
  private async withLockedKey(
    userId: string,
    keyId: string,
    change: (manager: EntityManager, key: ApiKey) => Promise<ApiKey>,
  ): Promise<ApiKey> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const key = await manager.findOne(ApiKey, { where: { id: keyId, userId }, lock: { mode: 'pessimistic_write' } });
        if (!key) throw new NotFoundError();
        const result = await change(manager, key);
        await announceKeyChange(manager, key.id);
        return result;
      });
    } finally {
      this.cache.invalidateKey(keyId);
    }
  }
}
