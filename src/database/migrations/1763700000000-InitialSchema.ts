import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, organizations, refresh-token records and API keys. */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        owner_id uuid,
        allowed_domains jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email varchar(254) NOT NULL,
        password_hash varchar(255) NOT NULL,
        is_admin boolean NOT NULL DEFAULT false,
        is_active boolean NOT NULL DEFAULT true,
        organization_id uuid REFERENCES organizations(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_key ON users (email)`);
    await queryRunner.query(
      `ALTER TABLE organizations ADD CONSTRAINT organizations_owner_fk FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL`,
    );
    await queryRunner.query(`
      CREATE TABLE refresh_tokens (
        jti uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX refresh_tokens_user_idx ON refresh_tokens (user_id)`);
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(100) NOT NULL,
        key_prefix varchar(12) NOT NULL,
        key_hash char(64) NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz,
        revoked_at timestamptz,
        rotated_from_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        replaced_by_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        grace_until timestamptz
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash)`);
    await queryRunner.query(`CREATE INDEX api_keys_user_created_idx ON api_keys (user_id, created_at DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE refresh_tokens`);
    await queryRunner.query(`ALTER TABLE organizations DROP CONSTRAINT organizations_owner_fk`);
    await queryRunner.query(`DROP TABLE users`);
    await queryRunner.query(`DROP TABLE organizations`);
  }
}
