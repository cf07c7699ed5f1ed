import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where each chunk's passage lies in its document: `content.slice(start_offset, end_offset)` (UTF-16
 * offsets, as JavaScript slices), and its 1-based page for a PDF. Chunks stored before stay null
 * ("unknown"): their PDFs were stored without page breaks, and re-uploading a document locates it.
 */
export class LocatedPassages1763700430000 implements MigrationInterface {
  name = 'LocatedPassages1763700430000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE document_chunks ADD COLUMN start_offset integer, ADD COLUMN end_offset integer, ADD COLUMN page integer`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE document_chunks DROP COLUMN page, DROP COLUMN end_offset, DROP COLUMN start_offset`,
    );
  }
}
