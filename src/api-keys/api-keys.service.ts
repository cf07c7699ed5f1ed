import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { CollectionsService } from '../collections/collections.service.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { BadRequestError, NotFoundError, PermissionDeniedError, ValidationFailedError } from '../common/errors.js';
import { roleAtLeast } from '../common/roles.js';
import type { PageRequest } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import type { ApiKeyEvent, KeyAction, KeyChanges } from './api-key-event.entity.js';
import { ApiKeyEventsRepository } from './api-key-events.repository.js';
import { ApiKey } from './api-key.entity.js';
import { type ApiKeyRecord, isKeyActive, presentApiKey, presentChangeable } from './api-key.presenter.js';
import { ApiKeysRepository, type KeyChangeableFields } from './api-keys.repository.js';
import type { AuditContext } from './audit-context.js';
import { generateApiKey } from './key-format.js';
import { DEFAULT_KEY_SETTINGS, type KeySettings } from './key-settings.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { VerifiedKeyCache } from './verified-key-cache.js';

/** The list answers the newest keys only (revoked ones stay listed, so it would otherwise grow forever). */
export const KEY_LIST_MAX = 1000;

export const NOT_ACTIVE = 'This API key is revoked, rotated or expired; only an active key can be changed or rotated.';

/** The 400 of a create past MAX_ACTIVE_KEYS_PER_ORG. */
export const tooManyKeys = (max: number) =>
  `This organization already has ${max} active API keys, the most it may have (MAX_ACTIVE_KEYS_PER_ORG); revoke one before creating another.`;

/** The 400 of a `rate_limit_per_minute` above KEY_RATE_LIMIT_MAX_PER_MINUTE. */
export const rateLimitAboveCeiling = (max: number) =>
  ValidationFailedError.field(
    'rate_limit_per_minute',
    `Ensure this value is less than or equal to ${max} (this service's ceiling, KEY_RATE_LIMIT_MAX_PER_MINUTE).`,
  );

/** Whose keys a change may touch: the caller's own, in its active organization. */
export type KeyHolder = Pick<Principal, 'userId' | 'organizationId'>;

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: ApiKeysRepository,
    private readonly eventLog: ApiKeyEventsRepository,
    private readonly cache: VerifiedKeyCache,
    private readonly lastUsed: LastUsedRecorder,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A key's `collection_ids` as stored: the organization's collections (404 naming one that is not), or null. */
  private async collectionsOf(organizationId: string, ids: readonly string[] | null | undefined) {
    return ids ? await this.collections.ofOrganization(organizationId, ids) : ids;
  }

  /** The caller's own keys in its active organization. */
  async list(caller: KeyHolder): Promise<ApiKeyRecord[]> {
    const keys = await this.keys.newestOf(caller, KEY_LIST_MAX);
    const credits = await this.keys.creditsUsedThisPeriod(keys.map((key) => key.id));
    return keys.map((key) =>
      presentApiKey(key, { lastUsedAt: this.lastUsed.pendingFor(key.id), creditsUsed: credits.get(key.id) }),
    );
  }

  async create(
    owner: Principal,
    input: { name: string } & Partial<KeySettings>,
    audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    this.checkRateLimit(input.rateLimitPerMinute);
    if (input.collectionIds)
      input = { ...input, collectionIds: await this.collectionsOf(owner.organizationId, input.collectionIds) };
    const { key, record } = await this.dataSource.transaction(async (manager) => {
      await this.lockMember(manager, owner.organizationId, owner.userId);
      // Concurrent creates of one organization queue here, so the count is exact. Rotations are not
      // counted: each retires one active key as it adds one (the old key in its grace period is no
      // longer active), so the cap never blocks replacing a key.
      const active = await this.keys.lockAndCountActive(manager, owner.organizationId);
      if (active >= this.config.MAX_ACTIVE_KEYS_PER_ORG)
        throw new BadRequestError(tooManyKeys(this.config.MAX_ACTIVE_KEYS_PER_ORG));
      const created = await this.insertKey(manager, owner.userId, owner.organizationId, {
        ...DEFAULT_KEY_SETTINGS,
        ...input,
        expiresAt: null,
      });
      await this.audit(manager, 'created', created.record, audit, null);
      // Every instance forgets the hashes it knows to match nothing: this key could be one of them.
      await this.keys.announceChange(manager, created.record.id);
      return created;
    });
    this.cache.invalidateKey(record.id);
    return presentApiKey(record, { fullKey: key });
  }

  /** Applies the fields given; the audit entry lists those whose value changed. */
  async update(
    caller: KeyHolder,
    keyId: string,
    fields: Partial<KeyChangeableFields>,
    audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    this.checkRateLimit(fields.rateLimitPerMinute);
    const updated = await this.changeActiveKey(caller, keyId, async (manager, key) => {
      if (fields.collectionIds)
        fields = { ...fields, collectionIds: await this.collectionsOf(key.organizationId, fields.collectionIds) };
      const before = presentChangeable(key);
      await this.keys.change(manager, key.id, fields);
      const after = presentChangeable(Object.assign(key, fields));
      const changes: KeyChanges = {};
      for (const field of Object.keys(before) as (keyof typeof before)[]) {
        if (JSON.stringify(before[field]) !== JSON.stringify(after[field]))
          changes[field] = [before[field], after[field]];
      }
      await this.audit(manager, 'updated', key, audit, changes);
      return key;
    });
    const credits = await this.keys.creditsUsedThisPeriod([keyId]);
    return presentApiKey(updated, { lastUsedAt: this.lastUsed.pendingFor(keyId), creditsUsed: credits.get(keyId) });
  }

  /**
   * Replaces an active key with one of the same name, expiry and settings (and this period's spend).
   * The row lock makes concurrent rotations of one key queue up: the first issues the new key, the
   * others then find the old key inactive and get a 400.
   */
  async rotate(
    caller: KeyHolder,
    keyId: string,
    gracePeriodSeconds: number,
    audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    let fullKey = '';
    const replacement = await this.changeActiveKey(caller, keyId, async (manager, old) => {
      const { key, record } = await this.insertKey(manager, old.userId, old.organizationId, {
        name: old.name,
        expiresAt: old.expiresAt,
        scopes: old.scopes,
        rateLimitPerMinute: old.rateLimitPerMinute,
        monthlyCreditLimit: old.monthlyCreditLimit,
        metadata: old.metadata,
        collectionIds: old.collectionIds,
        rotatedFromId: old.id,
      });
      fullKey = key;
      await this.keys.retire(manager, old.id, record.id, gracePeriodSeconds);
      await this.audit(manager, 'rotated', old, audit, {
        id: [old.id, record.id],
        key_prefix: [old.keyPrefix, record.keyPrefix],
      });
      return record;
    });
    const credits = await this.keys.creditsUsedThisPeriod([replacement.id]);
    return presentApiKey(replacement, { fullKey, rotatedFrom: keyId, creditsUsed: credits.get(replacement.id) });
  }

  /** Idempotent: revoking a revoked key changes nothing (and logs nothing). A rotated-away key loses its grace period. */
  async revoke(
    caller: KeyHolder | { organizationId: string },
    keyId: string,
    audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    const revoked = await this.withLockedKey(caller, keyId, async (manager, key) => {
      if (key.revokedAt !== null) return key;
      await this.audit(manager, 'revoked', key, audit, null);
      return this.keys.revoke(manager, key.id);
    });
    const credits = await this.keys.creditsUsedThisPeriod([keyId]);
    return presentApiKey(revoked, { lastUsedAt: this.lastUsed.pendingFor(keyId), creditsUsed: credits.get(keyId) });
  }

  /**
   * Every key of the organization, newest first, with who made it (admins and the owner; the contract's
   * organization-wide list).
   */
  async listOrganization(
    organizationId: string,
    page: PageRequest,
  ): Promise<{ keys: (ApiKeyRecord & { created_by: { user_id: string; email: string | null } })[]; count: number }> {
    const [keys, count] = await this.keys.pageOfOrganization(organizationId, page);
    const credits = await this.keys.creditsUsedThisPeriod(keys.map((key) => key.id));
    const emails = await this.eventLog.actorEmails([...new Set(keys.map((key) => key.userId))]);
    return {
      count,
      keys: keys.map((key) => ({
        ...presentApiKey(key, { lastUsedAt: this.lastUsed.pendingFor(key.id), creditsUsed: credits.get(key.id) }),
        created_by: { user_id: key.userId, email: emails.get(key.userId) ?? null },
      })),
    };
  }

  /**
   * Revokes every usable key a member holds in an organization, inside the caller's transaction (a
   * removal or a leave), each with its audit entry and its announcement on commit. Answers their ids:
   * once the transaction has committed, `forget` them here.
   */
  async revokeAllOf(
    manager: EntityManager,
    organizationId: string,
    userId: string,
    audit: AuditContext,
  ): Promise<string[]> {
    const keys = await this.keys.lockUsableOf(manager, organizationId, userId);
    for (const key of keys) {
      await this.audit(manager, 'revoked', key, audit, null);
      await this.keys.revoke(manager, key.id);
      await this.keys.announceChange(manager, key.id);
    }
    return keys.map((key) => key.id);
  }

  /** Drops these keys from this instance's cache (other instances hear of it through the listener). */
  forget(keyIds: readonly string[]): void {
    for (const id of keyIds) this.cache.invalidateKey(id);
  }

  /** A key's own limit may not exceed the operator's ceiling (the DTO checks the contract's 1 to 1,000,000). */
  private checkRateLimit(perMinute: number | null | undefined): void {
    if (typeof perMinute === 'number' && perMinute > this.config.KEY_RATE_LIMIT_MAX_PER_MINUTE)
      throw rateLimitAboveCeiling(this.config.KEY_RATE_LIMIT_MAX_PER_MINUTE);
  }

  /** The audit log of the organization's keys, newest first, with the e-mail of each change's author. */
  async listEvents(
    organizationId: string,
    page: PageRequest,
  ): Promise<{ events: ApiKeyEvent[]; count: number; emails: Map<string, string> }> {
    const [events, count] = await this.eventLog.page(organizationId, page);
    const actors = [...new Set(events.flatMap((event) => (event.actorUserId ? [event.actorUserId] : [])))];
    return { events, count, emails: await this.eventLog.actorEmails(actors) };
  }

  private audit(
    manager: EntityManager,
    action: KeyAction,
    key: ApiKey,
    context: AuditContext,
    changes: KeyChanges | null,
  ): Promise<void> {
    return this.eventLog.record(manager, {
      organizationId: key.organizationId,
      keyId: key.id,
      keyPrefix: key.keyPrefix,
      action,
      actorUserId: context.actorUserId,
      changes,
      requestId: context.requestId,
      ip: context.ip,
    });
  }

  private async insertKey(
    manager: EntityManager,
    userId: string,
    organizationId: string,
    settings: KeyChangeableFields & Partial<Pick<ApiKey, 'rotatedFromId'>>,
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
    caller: KeyHolder,
    keyId: string,
    change: (manager: EntityManager, key: ApiKey) => Promise<ApiKey>,
  ): Promise<ApiKey> {
    return this.withLockedKey(caller, keyId, (manager, key) => {
      if (!isKeyActive(key)) throw new BadRequestError(NOT_ACTIVE);
      return change(manager, key);
    });
  }

  /**
   * Runs a change on the caller's own key in its active organization (or, given only an organization,
   * any key of it) under a row lock, tells every instance about it on commit, and drops it from this
   * instance's cache. Someone else's key is a 404, like a missing one.
   */
  /**
   * The guard read the caller's role from a cache: a member removed (or made a viewer) meanwhile makes
   * or changes no key. The membership row stays share-locked (taken first, as a removal takes it before
   * the member's keys): a removal waits for this transaction and then revokes what it made.
   */
  private async lockMember(manager: EntityManager, organizationId: string, userId: string): Promise<void> {
    const role = await this.keys.lockMembershipRole(manager, organizationId, userId);
    if (!role || !roleAtLeast(role, 'member')) throw new PermissionDeniedError();
  }

  private async withLockedKey(
    holder: KeyHolder | { organizationId: string },
    keyId: string,
    change: (manager: EntityManager, key: ApiKey) => Promise<ApiKey>,
  ): Promise<ApiKey> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        if ('userId' in holder) await this.lockMember(manager, holder.organizationId, holder.userId);
        const key = await this.keys.lockOwned(manager, holder, keyId);
        if (!key) throw NotFoundError.named('API key', keyId);
        const result = await change(manager, key);
        await this.keys.announceChange(manager, key.id);
        return result;
      });
    } finally {
      this.cache.invalidateKey(keyId);
    }
  }
}
