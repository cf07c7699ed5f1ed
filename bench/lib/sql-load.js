/**
 * Loads generated documents straight into the service's tables (`documents`, `document_chunks`,
 * `corpus_stats`, `term_stats`), for the benches that need a million chunks in minutes instead of the
 * 25–50 minutes the API's path takes (146 documents/s). The tables and their indexes are the ones the
 * migrations made; only the work of computing each chunk's tsvector moves from PostgreSQL to here.
 *
 * Each chunk's `search_vector` is what `SearchIndexRepository.addDocuments` stores
 * (`setweight(tsvector(title), 'B') || tsvector(content)`), built from a table of what PostgreSQL's
 * parser and stemmer make of each distinct word (`lexemesOf`, asked once per word): its lexemes and how
 * many positions it takes (a stop word takes one and leaves no lexeme). `verifySample` recomputes the
 * vectors of a sample of chunks with PostgreSQL's own functions and counts the ones that differ.
 *
 * Chunks: a document's paragraphs, gathered until a chunk holds CHUNK_WORDS words (the service's chunker
 * makes chunks of a few hundred words; the growth corpus's documents give about five each).
 */
import { randomUUID } from 'node:crypto';

const CHUNK_WORDS = 200;
/** tsvector keeps at most this many positions of one lexeme (MAXNUMPOS in PostgreSQL). */
const MAX_POSITIONS = 256;
const SENTINEL = 'zqxjkv';
const WORD = /[a-z][a-z0-9]*(?:-[a-z0-9]+)*/g;

/** Word -> { width: positions it takes, lexemes: [[offset, lexeme], ...] }, asked of PostgreSQL for unknown words. */
export class LexemeTable {
  constructor() {
    this.known = new Map();
  }

  async learn(client, words) {
    const unknown = [...new Set(words)].filter((word) => !this.known.has(word));
    for (let i = 0; i < unknown.length; i += 20_000) {
      const batch = unknown.slice(i, i + 20_000);
      // The sentinel's position tells how many positions the word took (stop words included).
      const answer = await client.query(
        `SELECT w.word,
                (SELECT p - 1 FROM unnest(v.vec) e, unnest(e.positions) p WHERE e.lexeme = '${SENTINEL}') AS width,
                (SELECT coalesce(json_agg(json_build_array(p, e.lexeme)), '[]'::json)
                   FROM unnest(v.vec) e, unnest(e.positions) p WHERE e.lexeme <> '${SENTINEL}') AS lexemes
           FROM unnest($1::text[]) AS w(word)
          CROSS JOIN LATERAL (SELECT to_tsvector('english', translate(w.word || ' ${SENTINEL}', '/-', '  ')) AS vec) v`,
        [batch],
      );
      // A pg client answers { rows }, a TypeORM DataSource the rows themselves.
      for (const row of answer.rows ?? answer) this.known.set(row.word, { width: row.width, lexemes: row.lexemes });
    }
  }

  /** Learns every word the growth corpus can generate: SciFact's vocabulary and its topic-word variants. */
  async learnVocabulary(client, vocabulary, suffixes) {
    await this.learn(client, [...vocabulary, ...vocabulary.flatMap((word) => suffixes.map((suffix) => word + suffix))]);
  }

  /** Adds a text's lexemes at positions after `start`: returns the last position taken, or -1 for an unknown word. */
  place(text, start, weight, positions) {
    let at = start;
    for (const word of text.toLowerCase().match(WORD) ?? []) {
      const entry = this.known.get(word);
      if (!entry) return -1;
      for (const [offset, lexeme] of entry.lexemes) {
        let list = positions.get(lexeme);
        if (!list) positions.set(lexeme, (list = []));
        list.push(`${Math.min(at + offset, 16383)}${weight}`);
      }
      at += entry.width;
    }
    return at;
  }
}

export function wordsOf(text) {
  return text.toLowerCase().match(WORD) ?? [];
}

/** A document's chunks: [{content, start, end}] over whole paragraphs. */
export function chunksOf(content) {
  const chunks = [];
  let start = 0;
  let words = 0;
  let at = 0;
  for (const paragraph of content.split('\n\n')) {
    const end = at + paragraph.length;
    words += paragraph.split(' ').length;
    if (words >= CHUNK_WORDS) {
      chunks.push({ content: content.slice(start, end), start, end });
      start = end + 2;
      words = 0;
    }
    at = end + 2;
  }
  if (start < content.length) chunks.push({ content: content.slice(start), start, end: content.length });
  return chunks;
}

/** A chunk's tsvector as text, its token_count and title_end, as addDocuments computes them. */
function vectorOf(table, title, content) {
  const positions = new Map();
  // The title's vector comes first; concatenation shifts the body by the title's last lexeme position.
  if (table.place(title, 0, 'B', positions) < 0) return null;
  let titleEnd = 0;
  for (const list of positions.values()) for (const p of list) titleEnd = Math.max(titleEnd, parseInt(p, 10));
  if (table.place(content, titleEnd, '', positions) < 0) return null;
  let tokens = 0;
  const entries = [];
  for (const [lexeme, list] of positions) {
    const kept = list.slice(0, MAX_POSITIONS);
    tokens += kept.length;
    entries.push(`'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}':${kept.join(',')}`);
  }
  return { vector: entries.join(' '), tokens, titleEnd, lexemes: positions.keys() };
}

/**
 * Inserts documents (`{title, content}`) of one corpus: `owner` is `{domainId}` or
 * `{organizationId, collectionId}` (the chunks' scope_id is the domain's or the collection's id).
 * Counts each term's chunks into `stats` (a CorpusStats), written by `writeStats`.
 */
export async function insertDocuments(client, table, owner, documents, stats) {
  const scopeId = owner.domainId ?? owner.collectionId;
  const docs = { id: [], title: [], content: [], size: [], chunks: [] };
  const chunks = { document: [], ordinal: [], content: [], vector: [], tokens: [], titleEnd: [], start: [], end: [] };
  for (const doc of documents) {
    const id = randomUUID();
    const title = doc.title.slice(0, 300);
    const pieces = chunksOf(doc.content);
    docs.id.push(id);
    docs.title.push(title);
    docs.content.push(doc.content);
    docs.size.push(Buffer.byteLength(doc.content));
    docs.chunks.push(pieces.length);
    let vectors = pieces.map((piece) => vectorOf(table, title, piece.content));
    if (vectors.includes(null)) {
      // Words outside the vocabulary learned beforehand (none from the growth corpus) are asked for here.
      await table.learn(client, [...wordsOf(title), ...wordsOf(doc.content)]);
      vectors = pieces.map((piece) => vectorOf(table, title, piece.content));
    }
    pieces.forEach((piece, ordinal) => {
      const { vector, tokens, titleEnd, lexemes } = vectors[ordinal];
      chunks.document.push(id);
      chunks.ordinal.push(ordinal);
      chunks.content.push(piece.content);
      chunks.vector.push(vector);
      chunks.tokens.push(tokens);
      chunks.titleEnd.push(titleEnd);
      chunks.start.push(piece.start);
      chunks.end.push(piece.end);
      stats.chunks++;
      stats.tokens += tokens;
      for (const lexeme of lexemes) stats.df.set(lexeme, (stats.df.get(lexeme) ?? 0) + 1);
    });
  }
  await client.query(
    `INSERT INTO documents (id, domain_id, organization_id, collection_id, title, content, content_type, size_bytes, chunk_count)
     SELECT x.id, $1, $2, $3, x.title, x.content, 'text/plain', x.size, x.chunks
       FROM unnest($4::uuid[], $5::text[], $6::text[], $7::int[], $8::int[]) AS x(id, title, content, size, chunks)`,
    [
      owner.domainId ?? null,
      owner.organizationId ?? null,
      owner.collectionId ?? null,
      docs.id,
      docs.title,
      docs.content,
      docs.size,
      docs.chunks,
    ],
  );
  await client.query(
    `INSERT INTO document_chunks (document_id, scope_id, ordinal, content, search_vector, token_count, title_end,
                                  start_offset, end_offset, page)
     SELECT x.document_id, $1, x.ordinal, x.content, x.vector::tsvector, x.tokens, x.title_end, x.start_offset, x.end_offset, NULL
       FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::int[])
            AS x(document_id, ordinal, content, vector, tokens, title_end, start_offset, end_offset)`,
    [
      scopeId,
      chunks.document,
      chunks.ordinal,
      chunks.content,
      chunks.vector,
      chunks.tokens,
      chunks.titleEnd,
      chunks.start,
      chunks.end,
    ],
  );
}

export function newStats() {
  return { chunks: 0, tokens: 0, df: new Map() };
}

/** Adds `stats` (counted since the last write) to the corpus's `corpus_stats` and `term_stats`, then clears it. */
export async function writeStats(client, scopeId, stats) {
  await client.query(
    `INSERT INTO corpus_stats (scope_id, chunk_count, total_tokens) VALUES ($1, $2, $3)
     ON CONFLICT (scope_id) DO UPDATE SET chunk_count = corpus_stats.chunk_count + excluded.chunk_count,
                                          total_tokens = corpus_stats.total_tokens + excluded.total_tokens`,
    [scopeId, stats.chunks, stats.tokens],
  );
  const entries = [...stats.df];
  for (let i = 0; i < entries.length; i += 50_000) {
    const batch = entries.slice(i, i + 50_000);
    await client.query(
      `INSERT INTO term_stats (scope_id, term, df) SELECT $1, x.term, x.df FROM unnest($2::text[], $3::int[]) AS x(term, df)
       ON CONFLICT (scope_id, term) DO UPDATE SET df = term_stats.df + excluded.df`,
      [scopeId, batch.map(([term]) => term), batch.map(([, df]) => df)],
    );
  }
  stats.chunks = 0;
  stats.tokens = 0;
  stats.df.clear();
}

/**
 * How many of `sample` random chunks hold a vector, token count or title end other than PostgreSQL's own
 * functions give (0 expected: the loaded index is the one the service would have built).
 */
export async function verifySample(client, sample = 2000) {
  const { rows } = await client.query(
    `SELECT count(*)::int AS checked,
            count(*) FILTER (WHERE v.vec <> c.search_vector OR t.title_end <> c.title_end
                                   OR (SELECT coalesce(sum(cardinality(e.positions)), 0) FROM unnest(v.vec) e) <> c.token_count)::int AS differing
       FROM (SELECT * FROM document_chunks TABLESAMPLE SYSTEM (1) LIMIT ${sample}) c
       JOIN documents d ON d.id = c.document_id
      CROSS JOIN LATERAL (SELECT setweight(to_tsvector('english', translate(d.title, '/-', '  ')), 'B') AS vec) tv
      CROSS JOIN LATERAL (SELECT coalesce(max(p), 0) AS title_end FROM unnest(tv.vec) e, unnest(e.positions) p) t
      CROSS JOIN LATERAL (SELECT tv.vec || to_tsvector('english', translate(c.content, '/-', '  ')) AS vec) v`,
  );
  return rows[0];
}
