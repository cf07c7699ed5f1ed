import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { CURRENT_PERIOD_SQL } from '../billing/billing-period.js';
import type { ApiKeyScope } from '../common/scopes.js';
import { preciseNow, toIsoMicros } from '../common/timestamps.js';
import { ApiKey } from './api-key.entity.js';
import { KEY_CHANGE_CHANNEL } from './key-change-listener.js';
import type { TeamRole } from '../common/roles.js';

/** A key as authentication needs it: whose it is, and until when it works (null: no end). */
export interface UsableKeyRow {
  id: string;
  user_id: string;
  organization_id: string;
  key_prefix: string;
  usable_until: Date | null;
  scopes: ApiKeyScope[] | null;
  rate_limit_per_minute: number | null;
  collection_ids: string[] | null;
}

/** The columns a key's owner may change. */
export type KeyChangeableFields = Pick<
  ApiKey,
  'name' | 'expiresAt' | 'scopes' | 'rateLimitPerMinute' | 'monthlyCreditLimit' | 'metadata' | 'collectionIds'
>;

export type NewApiKey = Pick<ApiKey, 'userId' | 'organizationId' | 'keyPrefix' | 'keyHash'> &
  KeyChangeableFields &
  Partial<Pick<ApiKey, 'rotatedFromId'>>;

/**
 * The `api_keys` table. Methods that take an EntityManager run inside the caller's transaction
 * (changes happen under the key's row lock, and their announcement is delivered on commit).
 */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  get manager(): EntityManager {
    return this.keys.manager;
  }

  /** A user's own keys in one organization (a user may belong to several). */
  newestOf(holder: { userId: string; organizationId: string }, limit: number): Promise<ApiKey[]> {
    return this.keys.find({
      where: { userId: holder.userId, organizationId: holder.organizationId },
      order: { createdAt: 'DESC' },
      take: limit,
    });
  }

  /** Every key of an organization, newest first. */
  pageOfOrganization(organizationId: string, page: { limit: number; offset: number }): Promise<[ApiKey[], number]> {
    return this.keys.findAndCount({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
  }

  /** A member's keys in an organization that still work (not revoked), locked until the transaction ends. */
  lockUsableOf(manager: EntityManager, organizationId: string, userId: string): Promise<ApiKey[]> {
    return manager
      .getRepository(ApiKey)
      .createQueryBuilder('key')
      .setLock('pessimistic_write')
      .where('key.organizationId = :organizationId AND key.userId = :userId AND key.revokedAt IS NULL', {
        organizationId,
        userId,
      })
      .getMany();
  }

  /**
   * The key, and for a new lineage its credit counter (which a spend locks, so it must exist from the
   * start). A rotated key joins its predecessor's lineage and counter: the two spend from one cap, in
   * the grace period too, and rotating is no way round it.
   */
  async insert(manager: EntityManager, key: NewApiKey): Promise<ApiKey> {
    // A SQL literal: pg would send a Date with milliseconds only (see preciseNow).
    const createdAt = toIsoMicros(preciseNow());
    const id = randomUUID();
    const predecessor = key.rotatedFromId ? await manager.findOneByOrFail(ApiKey, { id: key.rotatedFromId }) : null;
    const lineageId = predecessor?.lineageId ?? id;
    await manager.insert(ApiKey, { ...key, id, lineageId, createdAt: () => `'${createdAt}'::timestamptz` });
    if (!predecessor)
      await manager.query(`INSERT INTO api_key_credits (api_key_id, period_start) VALUES ($1, ${CURRENT_PERIOD_SQL})`, [
        id,
      ]);
    return manager.findOneByOrFail(ApiKey, { id });
  }

  /** What each key's lineage spent in the current period (0 for a counter from an earlier period). */
  async creditsUsedThisPeriod(keyIds: string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    const rows: { api_key_id: string; credits_used: number }[] = await this.keys.query(
      `SELECT k.id AS api_key_id,
              CASE WHEN c.period_start < ${CURRENT_PERIOD_SQL} THEN 0 ELSE c.credits_used END AS credits_used
         FROM api_keys k JOIN api_key_credits c ON c.api_key_id = k.lineage_id
        WHERE k.id = ANY($1::uuid[])`,
      [keyIds],
    );
    return new Map(rows.map((row) => [row.api_key_id, row.credits_used]));
  }

  /**
   * The user's role in the organization, its membership row share-locked until the transaction ends
   * (null: not a member). A removal locks that row first and revokes the member's keys in the same
   * transaction: a key inserted under this lock is either seen and revoked by it, or not made.
   */
  async lockMembershipRole(manager: EntityManager, organizationId: string, userId: string): Promise<TeamRole | null> {
    const rows: { role: TeamRole }[] = await manager.query(
      'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2 FOR SHARE',
      [organizationId, userId],
    );
    return rows[0]?.role ?? null;
  }

  /**
   * Locks the organization against other key creations until the transaction ends (NO KEY UPDATE:
   * inserts that reference the organization do not wait) and counts its active keys: neither revoked,
   * rotated away nor expired.
   */
  async lockAndCountActive(manager: EntityManager, organizationId: string): Promise<number> {
    await manager.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
    const rows: { n: number }[] = await manager.query(
      `SELECT count(*)::int AS n FROM api_keys
        WHERE organization_id = $1 AND is_active AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [organizationId],
    );
    return rows[0].n;
  }

  /**
   * The user's own key in the organization (or, without a user, any key of the organization), locked
   * until the transaction ends; null for a missing key or someone else's.
   */
  lockOwned(
    manager: EntityManager,
    holder: { userId?: string; organizationId: string },
    keyId: string,
  ): Promise<ApiKey | null> {
    const where = holder.userId
      ? { id: keyId, userId: holder.userId, organizationId: holder.organizationId }
      : { id: keyId, organizationId: holder.organizationId };
    return manager.findOne(ApiKey, { where, lock: { mode: 'pessimistic_write' } });
  }

  async change(manager: EntityManager, keyId: string, fields: Partial<KeyChangeableFields>): Promise<void> {
    await manager.update(ApiKey, { id: keyId }, fields);
  }

  /** Deactivates a rotated-away key, usable for `graceSeconds` more (0: none). */
  async retire(manager: EntityManager, keyId: string, replacementId: string, graceSeconds: number): Promise<void> {
    // The grace period never outlives the old key's own expiry.
    await manager.query(
      `UPDATE api_keys SET is_active = false, replaced_by_id = $2,
              grace_until = CASE WHEN $3::int > 0
                THEN LEAST(now() + make_interval(secs => $3::int), COALESCE(expires_at, 'infinity')) END
        WHERE id = $1`,
      [keyId, replacementId, graceSeconds],
    );
  }

  /** A rotated-away key loses its grace period too. Answers the revoked row. */
  async revoke(manager: EntityManager, keyId: string): Promise<ApiKey> {
    await manager.query(`UPDATE api_keys SET is_active = false, revoked_at = now(), grace_until = NULL WHERE id = $1`, [
      keyId,
    ]);
    return manager.findOneByOrFail(ApiKey, { id: keyId });
  }

  /** Tells every instance (see KeyChangeListener); delivered when the caller's transaction commits. */
  async announceChange(manager: EntityManager, keyId: string): Promise<void> {
    await manager.query('SELECT pg_notify($1, $2)', [KEY_CHANGE_CHANNEL, keyId]);
  }

  async findUsableByHash(hash: string): Promise<UsableKeyRow | undefined> {
    // Usable: not revoked, and either active or still inside a rotation's grace period; it stops at
    // the earlier of its expiry and the end of that grace.
    const rows: UsableKeyRow[] = await this.keys.query(
      `SELECT k.id, k.user_id, k.organization_id, k.key_prefix, k.scopes, k.rate_limit_per_minute, k.collection_ids,
              CASE WHEN k.is_active THEN k.expires_at
                   ELSE LEAST(k.grace_until, COALESCE(k.expires_at, k.grace_until)) END AS usable_until
         FROM api_keys k JOIN users u ON u.id = k.user_id AND u.is_active
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
          AND (k.is_active OR k.grace_until > now())`,
      [hash],
    );
    return rows[0];
  }

  /** One statement for a whole batch of uses; a stamp never moves back in time. */
  async recordLastUse(uses: ReadonlyMap<string, Date>): Promise<void> {
    await this.keys.query(
      `UPDATE api_keys AS k SET last_used_at = u.used_at
         FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, used_at)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at)`,
      [[...uses.keys()], [...uses.values()].map((date) => date.toISOString())],
    );
  }
}
