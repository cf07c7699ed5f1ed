import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attaching a file to a vector store is asynchronous (as OpenAI's is): the `vector_store_files` row in
 * `in_progress` is the queue. A worker claims a row with a lease (`claim`, `claimed_until`, renewed
 * while it works) and counts the attempt, so a worker that dies leaves the row due again when its lease
 * ends. A row's document going (`DELETE /v1/documents/{id}`) takes the file out of its vector store
 * rather than leaving it `completed` over nothing; rows left that way before are removed.
 */
export class AttachQueue1795746017023 implements MigrationInterface {
  name = 'AttachQueue1795746017023';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE vector_store_files
        ADD COLUMN claim uuid,
        ADD COLUMN claimed_until timestamptz,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0`);
    await queryRunner.query(
      `CREATE INDEX vector_store_files_queue_idx ON vector_store_files (created_at) WHERE status = 'in_progress'`,
    );
    await queryRunner.query(`DELETE FROM vector_store_files WHERE status = 'completed' AND document_id IS NULL`);
    await queryRunner.query(`
      ALTER TABLE vector_store_files
        DROP CONSTRAINT vector_store_files_document_id_fkey,
        ADD CONSTRAINT vector_store_files_document_id_fkey
          FOREIGN KEY (document_id) REFERENCES documents(id) ON DELETE CASCADE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE vector_store_files
        DROP CONSTRAINT vector_store_files_document_id_fkey,
        ADD CONSTRAINT vector_store_files_document_id_fkey
          FOREIGN KEY (document_id) REFERENCES documents(id) ON DELETE SET NULL`);
    await queryRunner.query(`DROP INDEX vector_store_files_queue_idx`);
    await queryRunner.query(
      `ALTER TABLE vector_store_files DROP COLUMN attempts, DROP COLUMN claimed_until, DROP COLUMN claim`,
    );
  }
}
