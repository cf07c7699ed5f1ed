import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refresh-token families (rotation with reuse detection), and a per-user cut-off before which access
 * tokens are refused (sign out everywhere, promotion, password change).
 */
export class TokenLifecycle1763700310000 implements MigrationInterface {
  name = 'TokenLifecycle1763700310000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Every token issued by one sign-in shares the family of the first; existing rows start their own.
    await queryRunner.query(`ALTER TABLE refresh_tokens ADD COLUMN family_id uuid`);
    await queryRunner.query(`UPDATE refresh_tokens SET family_id = jti`);
    await queryRunner.query(`ALTER TABLE refresh_tokens ALTER COLUMN family_id SET NOT NULL`);
    // Set when a rotation replaced the token: presenting it again is reuse.
    await queryRunner.query(`ALTER TABLE refresh_tokens ADD COLUMN replaced_by uuid`);
    await queryRunner.query(`CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id)`);
    await queryRunner.query(`CREATE INDEX refresh_tokens_expires_idx ON refresh_tokens (expires_at)`);
    await queryRunner.query(`ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users DROP COLUMN tokens_valid_after`);
    await queryRunner.query(`DROP INDEX refresh_tokens_expires_idx`);
    await queryRunner.query(`DROP INDEX refresh_tokens_family_idx`);
    await queryRunner.query(`ALTER TABLE refresh_tokens DROP COLUMN replaced_by`);
    await queryRunner.query(`ALTER TABLE refresh_tokens DROP COLUMN family_id`);
  }
}
