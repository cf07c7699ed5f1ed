import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys (contract, "Idempotent POSTs"): one row per organization and key, claimed before the
 * request runs (`response_status` NULL: in progress until `claimed_until`) and then holding the stored
 * answer until `expires_at` (24 hours after the first request).
 */
export class IdempotencyKeys1763700400000 implements MigrationInterface {
  name = 'IdempotencyKeys1763700400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        request_hash char(64) NOT NULL,
        claim_id uuid NOT NULL,
        claimed_until timestamptz NOT NULL,
        response_status smallint,
        response_headers jsonb,
        response_body text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (organization_id, key)
      )`);
    await queryRunner.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
