import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleting a collection in steps: the request marks it deleted (`deleted_at`), which takes it and its
 * documents out of every read at once and frees its name, and the purger then deletes its documents a
 * batch per transaction, and the collection last (see collections/collection-purger.ts). One statement
 * cascading over a million chunks held its locks and its WAL for minutes.
 */
export class CollectionDeletion1795747714248 implements MigrationInterface {
  name = 'CollectionDeletion1795747714248';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE collections ADD COLUMN deleted_at timestamptz`);
    await queryRunner.query(`DROP INDEX collections_organization_name_key`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX collections_organization_name_key ON collections (organization_id, lower(name)) WHERE deleted_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX collections_deleted_idx ON collections (deleted_at) WHERE deleted_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Collections half deleted go the old way: at once, with their documents (cascade).
    await queryRunner.query(`DELETE FROM collections WHERE deleted_at IS NOT NULL`);
    await queryRunner.query(`DROP INDEX collections_deleted_idx`);
    await queryRunner.query(`DROP INDEX collections_organization_name_key`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX collections_organization_name_key ON collections (organization_id, lower(name))`,
    );
    await queryRunner.query(`ALTER TABLE collections DROP COLUMN deleted_at`);
  }
}
