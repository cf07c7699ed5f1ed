import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A bound on what `POST /v1/files` stores (issue 23): the bytes of each organization's files, summed in
 * `files_usage`, taken in the statement that inserts a file (within FILES_STORAGE_MB_PER_ORGANIZATION)
 * and given back by the one that deletes it. Backfilled from the files stored already.
 */
export class FilesStorage1795741185882 implements MigrationInterface {
  name = 'FilesStorage1795741185882';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE files_usage (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        bytes bigint NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      INSERT INTO files_usage (organization_id, bytes)
      SELECT organization_id, sum(bytes) FROM files GROUP BY organization_id`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE files_usage`);
  }
}
