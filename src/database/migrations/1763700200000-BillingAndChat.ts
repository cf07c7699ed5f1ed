import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Credit subscriptions, the usage ledger, and chat sessions with their messages. */
export class BillingAndChat1763700200000 implements MigrationInterface {
  name = 'BillingAndChat1763700200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE subscriptions (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        plan varchar(50) NOT NULL DEFAULT 'standard',
        monthly_credits integer NOT NULL CHECK (monthly_credits >= 0),
        period_start date NOT NULL,
        credits_used integer NOT NULL DEFAULT 0 CHECK (credits_used >= 0)
      )`);
    // Organizations created before this migration get a subscription too.
    await queryRunner.query(`
      INSERT INTO subscriptions (organization_id, monthly_credits, period_start)
      SELECT id, 1000, date_trunc('month', now() AT TIME ZONE 'UTC')::date FROM organizations`);
    await queryRunner.query(`
      CREATE TABLE usage_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        api_key_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        key_prefix varchar(12),
        operation varchar(30) NOT NULL,
        domain varchar(50),
        credits integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX usage_events_org_created_idx ON usage_events (organization_id, created_at DESC)`,
    );
    await queryRunner.query(`
      CREATE TABLE chat_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title varchar(200) NOT NULL,
        domain varchar(50),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX chat_sessions_user_updated_idx ON chat_sessions (user_id, updated_at DESC)`);
    await queryRunner.query(`
      CREATE TABLE chat_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        role varchar(10) NOT NULL CHECK (role IN ('user', 'assistant')),
        content text NOT NULL,
        sources jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX chat_messages_session_created_idx ON chat_messages (session_id, created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE chat_messages`);
    await queryRunner.query(`DROP TABLE chat_sessions`);
    await queryRunner.query(`DROP TABLE usage_events`);
    await queryRunner.query(`DROP TABLE subscriptions`);
  }
}
