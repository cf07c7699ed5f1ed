import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * FILES_STORAGE_MB_PER_ORGANIZATION counts what a file stores wherever it is: its upload's bytes once, and
 * each attachment to a vector store (the document it becomes, its indexed copy) as many bytes again while
 * it is not `failed`. The attach takes its share of `files_usage` (`charged_bytes`) when it is queued;
 * this trigger keeps the sum right whatever changes the row afterwards: a refusal (charge 0), a detach,
 * the file's, the document's, the collection's deletion (cascades that no service sees). The row keeps its
 * organization, since by then the collection or the file may be gone. Backfilled from the rows there are.
 */
export class AttachStorage1795746666273 implements MigrationInterface {
  name = 'AttachStorage1795746666273';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE vector_store_files ADD COLUMN organization_id uuid, ADD COLUMN charged_bytes bigint NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(`
      UPDATE vector_store_files v SET organization_id = c.organization_id,
             charged_bytes = CASE WHEN v.status = 'failed' THEN 0 ELSE f.bytes END
        FROM collections c, files f WHERE c.id = v.collection_id AND f.id = v.file_id`);
    await queryRunner.query(`ALTER TABLE vector_store_files ALTER COLUMN organization_id SET NOT NULL`);
    await queryRunner.query(`
      INSERT INTO files_usage AS u (organization_id, bytes)
      SELECT organization_id, sum(charged_bytes) FROM vector_store_files GROUP BY organization_id
      ON CONFLICT (organization_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes`);
    await queryRunner.query(`
      CREATE FUNCTION vector_store_files_usage() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        v_change bigint := CASE TG_OP WHEN 'INSERT' THEN NEW.charged_bytes
                                      WHEN 'DELETE' THEN -OLD.charged_bytes
                                      ELSE NEW.charged_bytes - OLD.charged_bytes END;
      BEGIN
        IF v_change <> 0 THEN
          INSERT INTO files_usage AS u (organization_id, bytes)
          SELECT coalesce(NEW.organization_id, OLD.organization_id), greatest(v_change, 0)
           WHERE EXISTS (SELECT 1 FROM organizations WHERE id = coalesce(NEW.organization_id, OLD.organization_id))
          ON CONFLICT (organization_id) DO UPDATE SET bytes = u.bytes + v_change;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER vector_store_files_usage AFTER INSERT OR UPDATE OF charged_bytes OR DELETE ON vector_store_files
      FOR EACH ROW EXECUTE FUNCTION vector_store_files_usage()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER vector_store_files_usage ON vector_store_files`);
    await queryRunner.query(`DROP FUNCTION vector_store_files_usage()`);
    await queryRunner.query(`
      UPDATE files_usage u SET bytes = u.bytes - s.charged
        FROM (SELECT organization_id, sum(charged_bytes) AS charged FROM vector_store_files GROUP BY organization_id) s
       WHERE u.organization_id = s.organization_id`);
    await queryRunner.query(`ALTER TABLE vector_store_files DROP COLUMN charged_bytes, DROP COLUMN organization_id`);
  }
}
