import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type ReadStatement, DirectReads } from '../database/direct-reads.js';
import { type CompiledFilter, compileMetadataFilter, type MetadataFilter } from './metadata-filter.js';
import { TEXT_SEARCH_CONFIG, tsvectorSql } from './text-search.js';

/** A chunk to index, and where its passage lies in its document's content (see the documents' chunker). */
export interface IndexedChunk {
  content: string;
  /** `content.slice(start, end)` of the document is the passage (UTF-16 offsets). */
  start: number;
  end: number;
  /** 1-based, for a passage of a PDF; else null. */
  page: number | null;
}

export interface ChunkedDocument {
  documentId: string;
  title: string;
  chunks: IndexedChunk[];
}

/** A query term as it occurs in a corpus: its frequency in the query and its context, and the corpus's statistics. */
export interface TermRow {
  term: string;
  main_tf: number;
  context_tf: number;
  df: number;
  chunk_count: number;
  total_tokens: number;
}

/** The best-scoring chunk of one document. */
export interface ScoredChunkRow {
  chunk_id: string;
  document_id: string;
  score: number;
}

export interface ChunkSnippetRow {
  id: string;
  document_id: string;
  content: string;
  title: string;
  metadata: Record<string, string | number>;
  snippet: string;
  start_offset: number | null;
  end_offset: number | null;
  page: number | null;
}

/** The weights of one BM25 scoring round (see Bm25Retriever.scoreRound). */
export interface ScoringWeights {
  /**
   * The corpus is small enough to test each of its chunks (found by `document_chunks_scope_idx`) rather
   * than to read the GIN index, whose posting lists hold every tenant's chunks (see scoreChunks).
   */
  scanCorpus?: boolean;
  terms: string[];
  weightedIdfs: number[];
  k1: number;
  b: number;
  avgLength: number;
  titleWeight: number;
}

/**
 * The search index: `document_chunks` and each corpus's BM25 statistics (`corpus_stats`, `term_stats`).
 *
 * Writes keep each corpus's statistics (chunk count, total length, document frequency per term) equal to
 * what the chunks hold. Every write runs inside the caller's transaction, so a document and its
 * statistics appear and disappear together.
 *
 * Concurrency: every writer of a corpus's statistics first locks that corpus's `corpus_stats` row (the
 * upsert or update below), so writers of one corpus take turns on `term_stats` and can never deadlock or
 * lose an increment. Chunk inserts themselves run in parallel; only the short statistics step is serial.
 *
 * The reads a search makes run straight on the pool (DirectReads); the two whose plan never changes
 * (term statistics, snippets) are prepared statements.
 */
@Injectable()
export class SearchIndexRepository {
  constructor(private readonly reads: DirectReads) {}

  async addDocuments(manager: EntityManager, corpusId: string, documents: readonly ChunkedDocument[]): Promise<void> {
    const rows = documents.flatMap((doc) => doc.chunks.map((chunk, ordinal) => ({ doc, chunk, ordinal })));
    if (rows.length === 0) return;
    const documentIds = documents.map((doc) => doc.documentId);
    // The title goes into every chunk's vector first, with weight B, so a title match can be told from a
    // body match by position: positions 1..title_end are the title's (concatenation shifts the body).
    await manager.query(
      `INSERT INTO document_chunks (document_id, scope_id, ordinal, content, search_vector, token_count, title_end,
                                    start_offset, end_offset, page)
       SELECT x.document_id, $1, x.ordinal, x.content, v.vec,
              (SELECT coalesce(sum(cardinality(e.positions)), 0) FROM unnest(v.vec) e),
              t.title_end, x.start_offset, x.end_offset, x.page
         FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[])
              AS x(document_id, ordinal, content, title, start_offset, end_offset, page)
        CROSS JOIN LATERAL (SELECT setweight(${tsvectorSql('x.title')}, 'B') AS vec) tv
        CROSS JOIN LATERAL (SELECT coalesce(max(p), 0) AS title_end FROM unnest(tv.vec) e, unnest(e.positions) p) t
        CROSS JOIN LATERAL (SELECT tv.vec || ${tsvectorSql('x.content')} AS vec) v`,
      [
        corpusId,
        rows.map((r) => r.doc.documentId),
        rows.map((r) => r.ordinal),
        rows.map((r) => r.chunk.content),
        rows.map((r) => r.doc.title),
        rows.map((r) => r.chunk.start),
        rows.map((r) => r.chunk.end),
        rows.map((r) => r.chunk.page),
      ],
    );
    await manager.query(
      `INSERT INTO corpus_stats (scope_id, chunk_count, total_tokens)
       SELECT $1, count(*), coalesce(sum(token_count), 0) FROM document_chunks WHERE document_id = ANY($2::uuid[])
       ON CONFLICT (scope_id) DO UPDATE
          SET chunk_count = corpus_stats.chunk_count + excluded.chunk_count,
              total_tokens = corpus_stats.total_tokens + excluded.total_tokens`,
      [corpusId, documentIds],
    );
    await manager.query(
      `INSERT INTO term_stats (scope_id, term, df)
       SELECT $1, e.lexeme, count(*) FROM document_chunks c, unnest(c.search_vector) e
        WHERE c.document_id = ANY($2::uuid[])
        GROUP BY e.lexeme
       ON CONFLICT (scope_id, term) DO UPDATE SET df = term_stats.df + excluded.df`,
      [corpusId, documentIds],
    );
  }

  /** Takes documents' chunks out of the corpus's statistics. The caller then deletes the documents (chunks cascade). */
  async removeDocuments(manager: EntityManager, corpusId: string, documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await manager.query(
      `UPDATE corpus_stats s
          SET chunk_count = s.chunk_count - d.chunks, total_tokens = s.total_tokens - d.tokens
         FROM (SELECT count(*) AS chunks, coalesce(sum(token_count), 0) AS tokens
                 FROM document_chunks WHERE document_id = ANY($2::uuid[])) d
        WHERE s.scope_id = $1`,
      [corpusId, documentIds],
    );
    // Terms whose last chunk goes are deleted rather than kept at zero; the two parts touch disjoint rows.
    await manager.query(
      `WITH gone AS (
         SELECT e.lexeme AS term, count(*) AS n FROM document_chunks c, unnest(c.search_vector) e
          WHERE c.document_id = ANY($2::uuid[]) GROUP BY e.lexeme
       ), lowered AS (
         UPDATE term_stats t SET df = t.df - gone.n FROM gone
          WHERE t.scope_id = $1 AND t.term = gone.term AND t.df > gone.n
       )
       DELETE FROM term_stats t USING gone WHERE t.scope_id = $1 AND t.term = gone.term AND t.df <= gone.n`,
      [corpusId, documentIds],
    );
    await manager.query(`DELETE FROM document_chunks WHERE document_id = ANY($1::uuid[])`, [documentIds]);
  }

  /** Forgets a whole corpus (a deleted domain): its chunks and statistics. */
  async dropCorpus(manager: EntityManager, corpusId: string): Promise<void> {
    await manager.query(`DELETE FROM corpus_stats WHERE scope_id = $1`, [corpusId]);
    await manager.query(`DELETE FROM term_stats WHERE scope_id = $1`, [corpusId]);
    await manager.query(`DELETE FROM document_chunks WHERE scope_id = $1`, [corpusId]);
  }

  /**
   * The query's stemmed terms (and its context queries') that occur in the corpora, with their statistics
   * summed over them (one corpus for a domain or a collection, several for collections asked together).
   */
  termStats(corpusIds: readonly string[], query: string, contextQueries: string[]): Promise<TermRow[]> {
    return this.reads.query(TERM_STATS, [corpusIds, query, contextQueries]);
  }

  /**
   * Scores the chunks matching `tsquery` against all the weighted terms; returns the best chunk of each of
   * the top `limit` documents. Per chunk: setweight+ts_filter keep only the query's lexemes (with their
   * positions), so tf is the number of positions, and width_bucket counts those inside the title
   * (positions 1..title_end, see addDocuments).
   *
   * A metadata filter is evaluated once per candidate document, not per candidate chunk, and after the
   * scoring: the chunks matching `tsquery` are scored as without a filter, the best of each document
   * kept (`best`), and only then is each of those documents' metadata checked, so a filter adds its own
   * comparisons to an unfiltered ranking and nothing else; the top `limit` are taken among the
   * documents that match. The candidates are checked best first (`o`, sorted and fenced by OFFSET 0)
   * and the statement stops at the `limit`-th that matches, with no sort above the checks: a filter
   * that most documents pass reads and checks about `limit` documents' metadata, not every
   * candidate's (the worst filter's statement on the bench question, 200 candidates: 18–24 ms → 7–11 ms
   * at p50, unfiltered 5–6 ms, on a loaded machine). The rows come out in that order; the
   * retriever sorts them anyway.
   * Each step is computed once per document, in subqueries that OFFSET 0 keeps from being merged into
   * the next (which would repeat the step in each use): `m.metadata` the metadata (`|| '{}'` hands back
   * the value decompressed, so a field does not decompress it again), `v` each filtered field, `t` each
   * of those as a number or a string (see compileMetadataFilter); the conditions compare plain values.
   * (Joined LATERAL, the steps got Memoize nodes keyed on the whole metadata: hashing 4 KB per document
   * made the worst filter cost 0.36 ms a document; a document is looked up by a subquery for the same reason.
   * Filtering the documents first, in CTEs the chunks were then joined to, made PostgreSQL estimate one
   * row for each CTE and join them in a nested loop: 200 candidates took 40,000 comparisons, half of the
   * worst filter's statement, and each scored chunk was read twice.)
   * Before, each operand of each candidate chunk fetched the whole metadata: a `$nin` of 100 values
   * on 1,000 documents took 670 ms, 20 such fields hit the statement timeout.
   *
   * `weights.scanCorpus`: the match is written `ts_match_vq(...)`, the function behind `@@`, which no index
   * serves, so PostgreSQL reads the corpus's chunks by their corpus and tests each. The GIN index holds
   * every tenant's postings: a word rare in a small tenant but common among the others made PostgreSQL
   * AND a GIN bitmap of thousands of other tenants' chunks with the corpus's (2 ms instead of 0.5 ms on
   * the tenants bench), so a small tenant's search cost depended on its neighbours.
   */
  scoreChunks(
    corpusIds: readonly string[],
    tsquery: string,
    weights: ScoringWeights,
    limit: number,
    filter?: MetadataFilter,
  ): Promise<ScoredChunkRow[]> {
    const matching = filter && Object.keys(filter).length > 0 ? compiledOnce(filter) : null;
    const best = `SELECT DISTINCT ON (c.document_id) c.id AS chunk_id, c.document_id, s.score
           FROM document_chunks c
          CROSS JOIN LATERAL (
            SELECT sum(($4::float8[])[array_position($3::text[], e.lexeme)] * ($5::float8 + 1) * f.tf
                       / (f.tf + $5::float8 * (1 - $6::float8 + $6::float8 * c.token_count / $7::float8))) AS score
              FROM unnest(ts_filter(setweight(c.search_vector, 'A', $3::text[]), '{a}')) e
             CROSS JOIN LATERAL (
               SELECT cardinality(e.positions) + ($8::float8 - 1) * width_bucket(c.title_end::smallint, e.positions) AS tf
             ) f
          ) s
          WHERE c.scope_id = ANY($1::uuid[])
            AND ${weights.scanCorpus ? 'ts_match_vq(c.search_vector, $2::tsquery)' : 'c.search_vector @@ $2::tsquery'}
          ORDER BY c.document_id, s.score DESC, c.id`;
    // Not prepared: its best plan depends on the values (the text index, or a scan of the corpus when
    // the words are common), so PostgreSQL plans it for each query.
    return this.reads.query<ScoredChunkRow>(
      {
        text: matching
          ? `SELECT t.chunk_id, t.document_id, t.score FROM (
         SELECT v.*, ${matching.typed} FROM (
           SELECT m.chunk_id, m.document_id, m.score, ${matching.fields} FROM (
             SELECT o.chunk_id, o.document_id, o.score,
                    (SELECT d.metadata || '{}'::jsonb FROM documents d WHERE d.id = o.document_id) AS metadata
               FROM (SELECT b.* FROM (${best}) b ORDER BY b.score DESC, b.chunk_id OFFSET 0) o OFFSET 0
           ) m OFFSET 0
         ) v OFFSET 0
       ) t
       WHERE ${matching.sql}
       LIMIT $9::int`
          : `SELECT chunk_id, document_id, score FROM (${best}) b
       ORDER BY score DESC, chunk_id
       LIMIT $9::int`,
      },
      [
        corpusIds,
        tsquery,
        weights.terms,
        weights.weightedIdfs,
        weights.k1,
        weights.b,
        weights.avgLength,
        weights.titleWeight,
        limit,
        ...(matching?.params ?? []),
      ],
    );
  }

  /** The chunks with their document's title and metadata, and a snippet highlighting `tsquery`. */
  chunksWithSnippets(chunkIds: string[], tsquery: string): Promise<ChunkSnippetRow[]> {
    return this.reads.query(CHUNKS_WITH_SNIPPETS, [chunkIds, tsquery]);
  }
}

/**
 * See termStats. Prepared (a named ReadStatement): its plan is lookups by primary key whatever the query.
 * Over several corpora (collections asked together) the statistics are summed: a term's df over them,
 * their chunk counts and lengths, exactly what one corpus holding all their chunks would store.
 */
const TERM_STATS: ReadStatement = {
  name: 'search_term_stats_over_corpora',
  text: `WITH q AS (
           SELECT e.lexeme AS term, cardinality(e.positions) AS main_tf, 0 AS context_tf
             FROM unnest(${tsvectorSql('$2')}) e
           UNION ALL
           SELECT e.lexeme, 0, cardinality(e.positions)
             FROM unnest($3::text[]) AS c(text), unnest(${tsvectorSql('c.text')}) e
         ), s AS (
           SELECT sum(chunk_count)::bigint AS chunk_count, sum(total_tokens)::bigint AS total_tokens
             FROM corpus_stats WHERE scope_id = ANY($1::uuid[])
         )
         SELECT q.term, sum(q.main_tf)::int AS main_tf, sum(q.context_tf)::int AS context_tf, t.df,
                s.chunk_count, s.total_tokens
           FROM q
          CROSS JOIN LATERAL (
            SELECT sum(ts.df)::int AS df FROM term_stats ts WHERE ts.scope_id = ANY($1::uuid[]) AND ts.term = q.term
          ) t
          CROSS JOIN s
          WHERE t.df > 0 AND s.chunk_count > 0
          GROUP BY q.term, t.df, s.chunk_count, s.total_tokens`,
};

/** See chunksWithSnippets. Prepared: its plan is lookups by primary key. */
const CHUNKS_WITH_SNIPPETS: ReadStatement = {
  name: 'search_chunks_with_snippets',
  text: `SELECT c.id, c.document_id, c.content, d.title, d.metadata, c.start_offset, c.end_offset, c.page,
                ts_headline('${TEXT_SEARCH_CONFIG}', c.content, $2::tsquery,
                  'StartSel=**, StopSel=**, MaxWords=40, MinWords=15, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "') AS snippet
           FROM document_chunks c JOIN documents d ON d.id = c.document_id
          WHERE c.id = ANY($1::uuid[])`,
};

/**
 * A filter compiled once per search: every ranking round of one search passes the same filter object,
 * and the worst filter's compilation (160 comparisons, 30 lists of 100 made array literals) is a
 * fifth of a millisecond of the event loop each time.
 */
const compiled = new WeakMap<MetadataFilter, CompiledFilter>();

function compiledOnce(filter: MetadataFilter): CompiledFilter {
  let done = compiled.get(filter);
  if (!done) compiled.set(filter, (done = compileMetadataFilter(filter, 'm.metadata', 'v', 't', 10)));
  return done;
}
