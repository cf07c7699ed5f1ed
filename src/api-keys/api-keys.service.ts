import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { BadRequestError, NotFoundError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { ApiKey } from './api-key.entity.js';
import { type ApiKeyRecord, isKeyActive, presentApiKey } from './api-key.presenter.js';
import { ApiKeysRepository } from './api-keys.repository.js';
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
    private readonly keys: ApiKeysRepository,
    private readonly cache: VerifiedKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async list(userId: string): Promise<ApiKeyRecord[]> {
    const keys = await this.keys.newestOf(userId, KEY_LIST_MAX);
    return keys.map((key) => presentApiKey(key, { lastUsedAt: this.lastUsed.pendingFor(key.id) }));
  }

  async create(owner: Principal, name: string): Promise<ApiKeyRecord> {
    const { key, record } = await this.insertKey(this.keys.manager, owner.userId, owner.organizationId, {
      name,
      expiresAt: null,
    });
    // Every instance forgets the hashes it knows to match nothing: this key could be one of them.
    this.cache.invalidateKey(record.id);
    await this.keys.announceChange(this.keys.manager, record.id);
    return presentApiKey(record, { fullKey: key });
  }

  async updateExpiry(userId: string, keyId: string, expiresAt: Date | null): Promise<ApiKeyRecord> {
    const updated = await this.changeActiveKey(userId, keyId, async (manager, key) => {
      await this.keys.setExpiry(manager, key.id, expiresAt);
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
      await this.keys.retire(manager, old.id, record.id, gracePeriodSeconds);
      return record;
    });
    return presentApiKey(replacement, { fullKey, rotatedFrom: keyId });
  }

  /** Idempotent: revoking a revoked key changes nothing. A rotated-away key loses its grace period. */
  async revoke(userId: string, keyId: string): Promise<ApiKeyRecord> {
    const revoked = await this.withLockedKey(userId, keyId, async (manager, key) => {
      if (key.revokedAt !== null) return key;
      return this.keys.revoke(manager, key.id);
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
    const record = await this.keys.insert(manager, {
      userId,
      organizationId,
      keyPrefix: generated.prefix,
      keyHash: generated.hash,
      ...settings,
    });
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
        const key = await this.keys.lockOwned(manager, userId, keyId);
        if (!key) throw new NotFoundError();
        const result = await change(manager, key);
        await this.keys.announceChange(manager, key.id);
        return result;
      });
    } finally {
      this.cache.invalidateKey(keyId);
    }
  }
}
