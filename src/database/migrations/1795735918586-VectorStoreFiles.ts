import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OpenAI's files and vector stores: a file uploaded with `POST /v1/files` keeps its bytes here until it
 * is attached to a vector store (a collection), where it is extracted, chunked and indexed as one of its
 * documents; `vector_store_files` records each attachment, its status and its error.
 */
export class VectorStoreFiles1795735918586 implements MigrationInterface {
  name = 'VectorStoreFiles1795735918586';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE files (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        filename varchar(300) NOT NULL,
        mimetype varchar(200) NOT NULL,
        purpose varchar(50) NOT NULL,
        bytes integer NOT NULL,
        content bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX files_organization_created_idx ON files (organization_id, created_at, id)`);
    await queryRunner.query(`
      CREATE TABLE vector_store_files (
        collection_id uuid NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        file_id uuid NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        document_id uuid REFERENCES documents(id) ON DELETE SET NULL,
        status varchar(20) NOT NULL,
        last_error jsonb,
        attributes jsonb NOT NULL DEFAULT '{}',
        usage_bytes integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (collection_id, file_id)
      )`);
    await queryRunner.query(`CREATE INDEX vector_store_files_file_idx ON vector_store_files (file_id)`);
    await queryRunner.query(`CREATE INDEX vector_store_files_document_idx ON vector_store_files (document_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE vector_store_files`);
    await queryRunner.query(`DROP TABLE files`);
  }
}
