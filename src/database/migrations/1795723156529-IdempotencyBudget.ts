import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounds on the idempotency store (issue 19): each stored answer counts its bytes (`stored_bytes`),
 * summed per organization in `idempotency_usage`, so the budget is checked without summing rows (and
 * `full_until_purged` set once an answer did not fit, until the purge gives bytes back); an
 * answer that was sent but not kept (too large, or the store full) leaves `not_kept`, so its replay is
 * refused rather than run again. Full API keys stored by earlier versions in key answers are removed.
 */
export class IdempotencyBudget1795723156529 implements MigrationInterface {
  name = 'IdempotencyBudget1795723156529';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        ADD COLUMN stored_bytes integer NOT NULL DEFAULT 0,
        ADD COLUMN not_kept varchar(16)`);
    // Answers of key creations and rotations held the full key: only the record stays.
    await queryRunner.query(`
      UPDATE idempotency_keys
         SET response_body = ((response_body::jsonb - 'key')
             || jsonb_build_object('key_withheld', 'The full key is shown once, in the first answer, and is not kept. If it was lost, rotate this key.'))::text
       WHERE CASE WHEN response_body LIKE '{%' THEN (response_body::jsonb ->> 'key') LIKE 'svc\\_%' ELSE false END`);
    await queryRunner.query(`
      UPDATE idempotency_keys
         SET stored_bytes = 200 + octet_length(key) + octet_length(coalesce(response_body, ''))
                          + octet_length(coalesce(response_headers::text, ''))
       WHERE response_status IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE idempotency_usage (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        bytes bigint NOT NULL DEFAULT 0,
        full_until_purged boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query(`
      INSERT INTO idempotency_usage (organization_id, bytes)
      SELECT organization_id, sum(stored_bytes) FROM idempotency_keys GROUP BY organization_id`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_usage`);
    await queryRunner.query(`ALTER TABLE idempotency_keys DROP COLUMN stored_bytes, DROP COLUMN not_kept`);
  }
}
