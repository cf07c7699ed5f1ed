import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Regions, public domains, documents and their chunks, and the corpus statistics that BM25 ranks with.
 *
 * A "scope" is one BM25 corpus: a public domain's documents or one organization's private ones. Its id
 * is the domain's or the organization's id (both UUIDs, so they never collide).
 */
export class Knowledge1763700100000 implements MigrationInterface {
  name = 'Knowledge1763700100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE regions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        slug varchar(50) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX regions_slug_key ON regions (slug)`);
    await queryRunner.query(`
      CREATE TABLE domains (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        slug varchar(50) NOT NULL,
        description text NOT NULL DEFAULT '',
        region_id uuid REFERENCES regions(id) ON DELETE SET NULL,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX domains_slug_key ON domains (slug)`);
    await queryRunner.query(`CREATE INDEX domains_region_idx ON domains (region_id)`);
    await queryRunner.query(`
      CREATE TABLE documents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        domain_id uuid REFERENCES domains(id) ON DELETE CASCADE,
        organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        title varchar(300) NOT NULL,
        content text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        content_type varchar(50) NOT NULL,
        size_bytes integer NOT NULL,
        chunk_count integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT documents_one_owner CHECK ((domain_id IS NULL) <> (organization_id IS NULL))
      )`);
    await queryRunner.query(
      `CREATE INDEX documents_domain_created_idx ON documents (domain_id, created_at DESC) WHERE domain_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX documents_organization_created_idx ON documents (organization_id, created_at DESC) WHERE organization_id IS NOT NULL`,
    );
    // search_vector = title (weight B) || content; positions 1..title_end are the title's, which is how
    // ranking tells a title match from a body match. token_count is the chunk's BM25 length.
    await queryRunner.query(`
      CREATE TABLE document_chunks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        scope_id uuid NOT NULL,
        ordinal integer NOT NULL,
        content text NOT NULL,
        search_vector tsvector NOT NULL,
        token_count integer NOT NULL,
        title_end integer NOT NULL
      )`);
    // The index is on the stored column the search query reads, not on an expression.
    await queryRunner.query(`CREATE INDEX document_chunks_search_idx ON document_chunks USING gin (search_vector)`);
    await queryRunner.query(`CREATE INDEX document_chunks_scope_idx ON document_chunks (scope_id)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX document_chunks_document_ordinal_key ON document_chunks (document_id, ordinal)`,
    );
    await queryRunner.query(`
      CREATE TABLE corpus_stats (
        scope_id uuid PRIMARY KEY,
        chunk_count bigint NOT NULL DEFAULT 0,
        total_tokens bigint NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      CREATE TABLE term_stats (
        scope_id uuid NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (scope_id, term)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE term_stats`);
    await queryRunner.query(`DROP TABLE corpus_stats`);
    await queryRunner.query(`DROP TABLE document_chunks`);
    await queryRunner.query(`DROP TABLE documents`);
    await queryRunner.query(`DROP TABLE domains`);
    await queryRunner.query(`DROP TABLE regions`);
  }
}
