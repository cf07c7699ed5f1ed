import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TEXT_SEARCH_CONFIG } from './text-search.js';

export interface ChunkedDocument {
  documentId: string;
  title: string;
  chunks: string[];
}

/**
 * Writes chunks into the search index and keeps each scope's BM25 statistics (chunk count, total length,
 * document frequency per term) equal to what the chunks hold. Every method runs inside the caller's
 * transaction, so a document and its statistics appear and disappear together.
 *
 * Concurrency: every writer of a scope's statistics first locks that scope's `corpus_stats` row (the
 * upsert or update below), so writers of one scope take turns on `term_stats` and can never deadlock or
 * lose an increment. Chunk inserts themselves run in parallel; only the short statistics step is serial.
 */
@Injectable()
export class CorpusIndexer {
  async addDocuments(manager: EntityManager, scopeId: string, documents: readonly ChunkedDocument[]): Promise<void> {
    const rows = documents.flatMap((doc) => doc.chunks.map((content, ordinal) => ({ doc, content, ordinal })));
    if (rows.length === 0) return;
    const documentIds = documents.map((doc) => doc.documentId);
    // The title goes into every chunk's vector first, with weight B, so a title match can be told from a
    // body match by position: positions 1..title_end are the title's (concatenation shifts the body).
    await manager.query(
      `INSERT INTO document_chunks (document_id, scope_id, ordinal, content, search_vector, token_count, title_end)
       SELECT x.document_id, $1, x.ordinal, x.content, v.vec,
              (SELECT coalesce(sum(cardinality(e.positions)), 0) FROM unnest(v.vec) e),
              t.title_end
         FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[]) AS x(document_id, ordinal, content, title)
        CROSS JOIN LATERAL (SELECT setweight(to_tsvector('${TEXT_SEARCH_CONFIG}', x.title), 'B') AS vec) tv
        CROSS JOIN LATERAL (SELECT coalesce(max(p), 0) AS title_end FROM unnest(tv.vec) e, unnest(e.positions) p) t
        CROSS JOIN LATERAL (SELECT tv.vec || to_tsvector('${TEXT_SEARCH_CONFIG}', x.content) AS vec) v`,
      [scopeId, rows.map((r) => r.doc.documentId), rows.map((r) => r.ordinal), rows.map((r) => r.content), rows.map((r) => r.doc.title)],
    );
    await manager.query(
      `INSERT INTO corpus_stats (scope_id, chunk_count, total_tokens)
       SELECT $1, count(*), coalesce(sum(token_count), 0) FROM document_chunks WHERE document_id = ANY($2::uuid[])
       ON CONFLICT (scope_id) DO UPDATE
          SET chunk_count = corpus_stats.chunk_count + excluded.chunk_count,
              total_tokens = corpus_stats.total_tokens + excluded.total_tokens`,
      [scopeId, documentIds],
    );
    await manager.query(
      `INSERT INTO term_stats (scope_id, term, df)
       SELECT $1, e.lexeme, count(*) FROM document_chunks c, unnest(c.search_vector) e
        WHERE c.document_id = ANY($2::uuid[])
        GROUP BY e.lexeme
       ON CONFLICT (scope_id, term) DO UPDATE SET df = term_stats.df + excluded.df`,
      [scopeId, documentIds],
    );
  }

  /** Takes documents' chunks out of the scope's statistics. The caller then deletes the documents (chunks cascade). */
  async removeDocuments(manager: EntityManager, scopeId: string, documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await manager.query(
      `UPDATE corpus_stats s
          SET chunk_count = s.chunk_count - d.chunks, total_tokens = s.total_tokens - d.tokens
         FROM (SELECT count(*) AS chunks, coalesce(sum(token_count), 0) AS tokens
                 FROM document_chunks WHERE document_id = ANY($2::uuid[])) d
        WHERE s.scope_id = $1`,
      [scopeId, documentIds],
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
      [scopeId, documentIds],
    );
    await manager.query(`DELETE FROM document_chunks WHERE document_id = ANY($1::uuid[])`, [documentIds]);
  }

  /** Forgets a whole scope (a deleted domain): its chunks and statistics. */
  async dropScope(manager: EntityManager, scopeId: string): Promise<void> {
    await manager.query(`DELETE FROM corpus_stats WHERE scope_id = $1`, [scopeId]);
    await manager.query(`DELETE FROM term_stats WHERE scope_id = $1`, [scopeId]);
    await manager.query(`DELETE FROM document_chunks WHERE scope_id = $1`, [scopeId]);
  }
}
