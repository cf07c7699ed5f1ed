import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Collections: several private knowledge bases per organization. Each collection is its own BM25
 * corpus (its id is the `scope_id` of its chunks and statistics).
 *
 * Every organization has a `default` collection whose id is the organization's own id. Until now an
 * organization's private corpus was stored under the organization's id, so its chunks, `corpus_stats`
 * and `term_stats` are already the `default` collection's: nothing of the search index is rewritten.
 * Only `documents.collection_id` is filled, in batches that each commit on their own (as in
 * MetadataInline), so the migration never holds a lock for long. Measured on the search bench's corpus
 * (docs/BENCHMARKS.md, "Collections").
 *
 * New organizations get their `default` collection from a trigger, whatever creates them
 * (registration, the CLI, tests); a document inserted without a collection (an instance still running
 * the previous release during a rolling deploy) goes into its organization's `default`.
 */
export class Collections1795734606595 implements MigrationInterface {
  name = 'Collections1795734606595';
  // Outside a transaction: each step is short, each batch commits on its own, and a run cut short is
  // simply run again (every step can be).
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS collections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(100) NOT NULL,
        description text,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    // Names are unique in an organization, whatever their case ("Support" and "support" would confuse).
    await queryRunner.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS collections_organization_name_key ON collections (organization_id, lower(name))`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS collections_organization_created_idx ON collections (organization_id, created_at, id)`,
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION collections_create_default() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collections (id, organization_id, name, created_at)
        VALUES (NEW.id, NEW.id, 'default', NEW.created_at) ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS collections_default ON organizations`);
    await queryRunner.query(`
      CREATE TRIGGER collections_default AFTER INSERT ON organizations
      FOR EACH ROW EXECUTE FUNCTION collections_create_default()`);
    await queryRunner.query(`
      INSERT INTO collections (id, organization_id, name, created_at)
      SELECT id, id, 'default', created_at FROM organizations ON CONFLICT DO NOTHING`);

    await queryRunner.query(
      `ALTER TABLE documents ADD COLUMN IF NOT EXISTS collection_id uuid REFERENCES collections(id) ON DELETE CASCADE`,
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION documents_default_collection() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.organization_id IS NOT NULL AND NEW.collection_id IS NULL THEN
          NEW.collection_id := NEW.organization_id;
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS documents_default_collection ON documents`);
    await queryRunner.query(`
      CREATE TRIGGER documents_default_collection BEFORE INSERT ON documents
      FOR EACH ROW EXECUTE FUNCTION documents_default_collection()`);
    await fillCollectionIds(queryRunner);
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS documents_collection_created_idx ON documents (collection_id, created_at DESC)
        WHERE collection_id IS NOT NULL`,
    );

    // Document events name their collection now (the Webhooks migration sent null until collections existed).
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION webhook_document_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM webhook_record_event(NEW.organization_id, 'document.indexed',
            jsonb_build_object('document_id', NEW.id, 'collection_id', NEW.collection_id, 'title', NEW.title));
        ELSE
          PERFORM webhook_record_event(OLD.organization_id, 'document.deleted',
            jsonb_build_object('document_id', OLD.id, 'collection_id', OLD.collection_id, 'title', OLD.title));
        END IF;
        RETURN NULL;
      END $$`);

    // An API key limited to some collections (null: every collection of its organization).
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS collection_ids uuid[]`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN IF EXISTS collection_ids`);
    // Documents of other collections than `default` go back into their organization's one corpus.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION webhook_document_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM webhook_record_event(NEW.organization_id, 'document.indexed',
            jsonb_build_object('document_id', NEW.id, 'collection_id', NULL, 'title', NEW.title));
        ELSE
          PERFORM webhook_record_event(OLD.organization_id, 'document.deleted',
            jsonb_build_object('document_id', OLD.id, 'collection_id', NULL, 'title', OLD.title));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS documents_default_collection ON documents`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS documents_default_collection()`);
    await queryRunner.query(`DROP INDEX IF EXISTS documents_collection_created_idx`);
    await queryRunner.query(`ALTER TABLE documents DROP COLUMN IF EXISTS collection_id`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS collections_default ON organizations`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS collections_create_default()`);
    await queryRunner.query(`DROP TABLE IF EXISTS collections`);
  }
}

/** Documents updated per statement: each statement must finish within the service's 15 s query timeout. */
const BATCH = 500;

/** Puts every private document into its organization's `default` collection (whose id is the organization's). */
async function fillCollectionIds(queryRunner: QueryRunner): Promise<void> {
  for (let after: string | null = '00000000-0000-0000-0000-000000000000'; after !== null;) {
    // A SELECT around the UPDATE, because TypeORM hands back an UPDATE's rows wrapped with its count.
    const [batch] = (await queryRunner.query(
      `WITH batch AS (
         SELECT id FROM documents WHERE id > $1::uuid ORDER BY id LIMIT ${BATCH}
       ), updated AS (
         UPDATE documents d SET collection_id = d.organization_id
          WHERE d.id IN (SELECT id FROM batch) AND d.organization_id IS NOT NULL AND d.collection_id IS NULL
       )
       SELECT max(id::text) AS last FROM batch`,
      [after],
    )) as { last: string | null }[];
    after = batch.last;
  }
}
