import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage ledger read by key: `GET /v1/billings/usage/?key_id=` walks one key's lines newest first,
 * within a `from`/`to` range, without reading the organization's other keys' lines.
 */
export class UsageByKey1763700440000 implements MigrationInterface {
  name = 'UsageByKey1763700440000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX usage_events_org_key_created_idx ON usage_events (organization_id, api_key_id, created_at DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX usage_events_org_key_created_idx`);
  }
}
