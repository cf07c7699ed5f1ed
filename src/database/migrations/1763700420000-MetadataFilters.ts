import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Metadata filters (`filter` on query, search and chat): equality and `$in` are jsonb containment on
 * documents.metadata, which this index serves (jsonb_path_ops: smaller and faster than the default
 * opclass for `@>`, the only operator the filters need it for).
 */
export class MetadataFilters1763700420000 implements MigrationInterface {
  name = 'MetadataFilters1763700420000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX documents_metadata_idx ON documents USING gin (metadata jsonb_path_ops)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX documents_metadata_idx`);
  }
}
