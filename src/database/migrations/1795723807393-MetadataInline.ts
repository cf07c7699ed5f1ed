import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents' metadata live in the table's own rows (STORAGE MAIN) instead of TOAST. A metadata
 * filter reads the metadata of every candidate document of a search: out of line (over ~2 KB), each
 * read went through the TOAST index, three page reads and a copy, ~45 µs a document, more than the
 * filter's own comparisons. DOCUMENT_METADATA_MAX_BYTES (8 KB) keeps them small enough to stay in the
 * row. Existing metadata are rewritten in batches so that they move in too.
 */
export class MetadataInline1795723807393 implements MigrationInterface {
  name = 'MetadataInline1795723807393';
  // Outside a transaction, as SearchVectorsInline: the ALTER's lock is held for an instant, each batch
  // commits on its own, and a run cut short is simply run again.
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE documents ALTER COLUMN metadata SET STORAGE MAIN`);
    await rewriteMetadata(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE documents ALTER COLUMN metadata SET STORAGE EXTENDED`);
    await rewriteMetadata(queryRunner);
  }
}

/** Documents rewritten per statement: each statement must finish within the service's 15 s query timeout. */
const BATCH = 500;

/** Stores every metadata anew (a new value, `|| '{}'`), so that it is placed by the column's storage now. */
async function rewriteMetadata(queryRunner: QueryRunner): Promise<void> {
  for (let after: string | null = '00000000-0000-0000-0000-000000000000'; after !== null;) {
    // A SELECT around the UPDATE, because TypeORM hands back an UPDATE's rows wrapped with its count.
    const [batch] = (await queryRunner.query(
      `WITH updated AS (
         UPDATE documents d SET metadata = d.metadata || '{}'::jsonb
          WHERE d.id IN (SELECT id FROM documents WHERE id > $1::uuid ORDER BY id LIMIT ${BATCH})
          RETURNING d.id
       )
       SELECT max(id::text) AS last FROM updated`,
      [after],
    )) as { last: string | null }[];
    after = batch.last;
  }
}
