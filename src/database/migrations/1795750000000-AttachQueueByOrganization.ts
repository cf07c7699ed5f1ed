import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The attach queue is claimed fairly between organizations (see openai-compat/attach-queue.ts): the claim
 * counts each organization's leased files once and takes the chosen organization's oldest due file, both
 * served by an index on the waiting files by organization. The index by creation time alone is left
 * unused by it and goes.
 */
export class AttachQueueByOrganization1795750000000 implements MigrationInterface {
  name = 'AttachQueueByOrganization1795750000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX vector_store_files_queue_organization_idx ON vector_store_files (organization_id, created_at)
        WHERE status = 'in_progress'`,
    );
    await queryRunner.query(`DROP INDEX vector_store_files_queue_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX vector_store_files_queue_idx ON vector_store_files (created_at) WHERE status = 'in_progress'`,
    );
    await queryRunner.query(`DROP INDEX vector_store_files_queue_organization_idx`);
  }
}
