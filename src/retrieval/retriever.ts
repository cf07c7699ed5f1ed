import type { MetadataFilter } from './metadata-filter.js';

/**
 * Which corpus a search runs over: a public domain's documents, or the documents of one or several
 * collections of an organization, ranked as one corpus (their statistics summed).
 */
export type Corpus = { domainId: string } | { collectionIds: readonly string[] };

export interface RetrievedSource {
  documentId: string;
  chunkId: string;
  title: string;
  content: string;
  /** A short passage of the chunk, plain text, with the matched words wrapped in `**`. */
  snippet: string;
  score: number;
  metadata: Record<string, string | number>;
  /** The passage is `content.slice(start, end)` of the document; null for chunks stored before offsets were kept. */
  start: number | null;
  end: number | null;
  /** 1-based, for a passage of a PDF; else null. */
  page: number | null;
}

/** A stemmed query term found in the corpus, and what it weighs there (its idf; less for a term from context only). */
export interface QueryTerm {
  term: string;
  weight: number;
}

/** A search's sources with the query's terms as the ranking weighed them, for the answerer to weigh sentences. */
export interface Retrieval {
  sources: RetrievedSource[];
  terms: QueryTerm[];
  /** What a query word the corpus does not hold would weigh (the highest idf there). */
  unseenWeight: number;
}

/** The seam between the API and the ranking method: BM25 today, a vector or hybrid retriever later. */
export interface Retriever {
  /** Best chunk per document, the top `limit` distinct documents, best first. */
  search(query: string, corpus: Corpus, options: SearchOptions): Promise<RetrievedSource[]>;
  /** `search`, and the query's terms with their weights. */
  retrieve(query: string, corpus: Corpus, options: SearchOptions): Promise<Retrieval>;
}

export interface SearchOptions {
  limit: number;
  /** Earlier user turns of a chat: they widen the search with a lower weight. */
  contextQueries?: string[];
  /** Only documents whose metadata match contribute passages. */
  filter?: MetadataFilter;
}

export const RETRIEVER = Symbol('RETRIEVER');

/**
 * The ids under which a corpus's chunks and statistics are stored, column `scope_id`: a domain's id, or
 * each collection's (all UUIDs, so they never collide; an organization's `default` collection has the
 * organization's id, under which its private documents were stored before collections existed).
 */
export function corpusIdsOf(corpus: Corpus): string[] {
  return 'domainId' in corpus ? [corpus.domainId] : [...corpus.collectionIds];
}
