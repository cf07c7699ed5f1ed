import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { AnswerNotKept } from '../common/errors.js';

/**
 * One `Idempotency-Key` of one organization: claimed while its first request runs, then the answer it
 * gave, replayed to a retry of the same request until `expiresAt`.
 */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 (hex) of the method, path and body: the same key with another request is refused. */
  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash: string;

  /** Which execution holds the claim: only it may store its answer or give the key back. */
  @Column({ name: 'claim_id', type: 'uuid' })
  claimId: string;

  /** While `responseStatus` is null the key is in progress, until then; past it the claim is abandoned. */
  @Column({ name: 'claimed_until', type: 'timestamptz' })
  claimedUntil: Date;

  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders: Record<string, string> | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** What this row counts in its organization's `idempotency_usage` (0 until an answer is settled). */
  @Column({ name: 'stored_bytes', type: 'integer', default: 0 })
  storedBytes: number;

  /** Set when the request answered but its answer was not kept: its replay is refused, never run again. */
  @Column({ name: 'not_kept', type: 'varchar', length: 16, nullable: true })
  notKept: AnswerNotKept | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
