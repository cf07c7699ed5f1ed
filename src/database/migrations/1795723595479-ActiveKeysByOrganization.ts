import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A key creation counts its organization's active keys (MAX_ACTIVE_KEYS_PER_ORG) without reading the others. */
export class ActiveKeysByOrganization1795723595479 implements MigrationInterface {
  name = 'ActiveKeysByOrganization1795723595479';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX api_keys_org_active_idx ON api_keys (organization_id) WHERE is_active AND revoked_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX api_keys_org_active_idx`);
  }
}
