import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partner-grade API keys: scopes, a per-key rate limit, a monthly credit cap with its own counter,
 * free-form metadata, and an audit log of key changes.
 */
export class PartnerKeys1763700410000 implements MigrationInterface {
  name = 'PartnerKeys1763700410000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // NULL scopes: every scope (keys made before scopes existed keep doing everything).
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN scopes text[]`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute integer`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN monthly_credit_limit integer`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb`);
    // The cap's counter, apart from api_keys so that a spend never contends with last-used writes or
    // key management. Every key has its row from creation: the spend locks it FOR UPDATE, which only
    // sees the latest count of a row that already exists.
    await queryRunner.query(`
      CREATE TABLE api_key_credits (
        api_key_id uuid PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
        period_start date NOT NULL,
        credits_used integer NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      INSERT INTO api_key_credits (api_key_id, period_start)
      SELECT id, date_trunc('month', now() AT TIME ZONE 'UTC')::date FROM api_keys`);
    await queryRunner.query(`
      CREATE TABLE api_key_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        key_id uuid NOT NULL,
        key_prefix varchar(12) NOT NULL,
        action varchar(16) NOT NULL,
        actor_user_id uuid,
        changes jsonb,
        request_id varchar(200),
        ip varchar(64),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX api_key_events_org_created_idx ON api_key_events (organization_id, created_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_key_events`);
    await queryRunner.query(`DROP TABLE api_key_credits`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN metadata`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN monthly_credit_limit`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN rate_limit_per_minute`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN scopes`);
  }
}
