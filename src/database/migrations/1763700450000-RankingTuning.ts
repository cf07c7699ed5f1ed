import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SQL for a tsvector of `textSql`, as indexing tokenizes before and after this migration. */
type Tokenizer = (textSql: string) => string;

const splitAtSlashesAndHyphens: Tokenizer = (textSql) => `to_tsvector('english', translate(${textSql}, '/-', '  '))`;
const parserAsIs: Tokenizer = (textSql) => `to_tsvector('english', ${textSql})`;

/**
 * Slashes and hyphens become word separators in the search index (see WORD_SEPARATORS in
 * src/retrieval/text-search.ts): every chunk's vector, length and title end are recomputed, and the
 * BM25 statistics rebuilt from them. The tokenizers are spelled out here, not imported, so that this
 * migration keeps meaning what it meant if the service's tokenization changes again.
 */
export class RankingTuning1763700450000 implements MigrationInterface {
  name = 'RankingTuning1763700450000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await reindex(queryRunner, splitAtSlashesAndHyphens);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await reindex(queryRunner, parserAsIs);
  }
}

/** Chunks rewritten per statement: each statement must finish within the service's 15 s query timeout. */
const BATCH = 500;

async function reindex(queryRunner: QueryRunner, tokenize: Tokenizer): Promise<void> {
  // The same vector as SearchIndexRepository.addDocuments builds: title (weight B), then content.
  for (let after: string | null = '00000000-0000-0000-0000-000000000000'; after !== null;) {
    // A SELECT around the UPDATE, because TypeORM hands back an UPDATE's rows wrapped with its count.
    const [batch] = (await queryRunner.query(
      `WITH updated AS (
         UPDATE document_chunks c
            SET search_vector = n.vec,
                token_count = (SELECT coalesce(sum(cardinality(e.positions)), 0) FROM unnest(n.vec) e),
                title_end = n.title_end
           FROM (SELECT x.id, tv.vec || ${tokenize('x.content')} AS vec, t.title_end
                   FROM (SELECT * FROM document_chunks WHERE id > $1::uuid ORDER BY id LIMIT ${BATCH}) x
                   JOIN documents d ON d.id = x.document_id
                  CROSS JOIN LATERAL (SELECT setweight(${tokenize('d.title')}, 'B') AS vec) tv
                  CROSS JOIN LATERAL (SELECT coalesce(max(p), 0) AS title_end FROM unnest(tv.vec) e, unnest(e.positions) p) t
                ) n
          WHERE n.id = c.id
          RETURNING c.id
       )
       SELECT max(id::text) AS last FROM updated`,
      [after],
    )) as { last: string | null }[];
    after = batch.last;
  }
  // The statistics, rebuilt one scope at a time from the new vectors.
  const scopes = (await queryRunner.query(`SELECT scope_id FROM corpus_stats`)) as { scope_id: string }[];
  for (const { scope_id: scopeId } of scopes) {
    await queryRunner.query(`DELETE FROM term_stats WHERE scope_id = $1`, [scopeId]);
    await queryRunner.query(
      `INSERT INTO term_stats (scope_id, term, df)
       SELECT $1, e.lexeme, count(*) FROM document_chunks c, unnest(c.search_vector) e
        WHERE c.scope_id = $1
        GROUP BY e.lexeme`,
      [scopeId],
    );
    await queryRunner.query(
      `UPDATE corpus_stats
          SET chunk_count = (SELECT count(*) FROM document_chunks WHERE scope_id = $1),
              total_tokens = (SELECT coalesce(sum(token_count), 0) FROM document_chunks WHERE scope_id = $1)
        WHERE scope_id = $1`,
      [scopeId],
    );
  }
}
