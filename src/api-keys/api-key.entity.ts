import type { ApiKeyScope } from '../common/scopes.js';
import type { KeyMetadata } from './key-settings.js';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An API key's whole lifecycle in one row: created active, optionally given an expiry, then either
 * revoked (`revoked_at`) or rotated (`replaced_by_id`, with an optional `grace_until` during which
 * the old value still works). Only the SHA-256 of the key is stored.
 */
@Entity('api_keys')
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'key_prefix', type: 'varchar', length: 12 })
  keyPrefix: string;

  /** Hex SHA-256 of the full key; unique index, the only lookup path. */
  @Column({ name: 'key_hash', type: 'char', length: 64, select: false })
  keyHash: string;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'rotated_from_id', type: 'uuid', nullable: true })
  rotatedFromId: string | null;

  @Column({ name: 'replaced_by_id', type: 'uuid', nullable: true })
  replacedById: string | null;

  /**
   * The first key of its rotation chain (its own id for a key made by create). The chain shares one
   * monthly credit counter, `api_key_credits` of this id, capped by its newest key's limit.
   */
  @Column({ name: 'lineage_id', type: 'uuid' })
  lineageId: string;

  /** After a rotation with a grace period: the old key authenticates until this instant. */
  @Column({ name: 'grace_until', type: 'timestamptz', nullable: true })
  graceUntil: Date | null;

  /** Null: every scope. */
  @Column({ type: 'text', array: true, nullable: true })
  scopes: ApiKeyScope[] | null;

  /** Null: RATE_LIMIT_PER_MINUTE. */
  @Column({ name: 'rate_limit_per_minute', type: 'integer', nullable: true })
  rateLimitPerMinute: number | null;

  /** Null: no cap beyond the organization's quota. The count is the lineage's, in `api_key_credits`. */
  @Column({ name: 'monthly_credit_limit', type: 'integer', nullable: true })
  monthlyCreditLimit: number | null;

  @Column({ type: 'jsonb', default: {} })
  metadata: KeyMetadata;

  /** The collections the key is limited to, in order (the first is where an upload without one goes); null: every one. */
  @Column({ name: 'collection_ids', type: 'uuid', array: true, nullable: true })
  collectionIds: string[] | null;
}
