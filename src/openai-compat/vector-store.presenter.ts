import { DEFAULT_CHUNKING } from '../documents/chunker.js';
import type { FileRow, VectorStoreFileRow, VectorStoreRow } from './vector-stores.repository.js';
import type { SearchHit, Window } from './vector-stores.service.js';

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Tokens per word of English text, to state the chunker's word counts in OpenAI's tokens. */
const TOKENS_PER_WORD = 4 / 3;

/**
 * OpenAI's static chunking strategy, with our chunker's figures: it counts words (at most
 * `maxWords` a chunk, at most `overlapWords` repeated from the previous one), stated here in tokens.
 */
export const CHUNKING_STRATEGY = {
  type: 'static' as const,
  static: {
    max_chunk_size_tokens: Math.ceil(DEFAULT_CHUNKING.maxWords * TOKENS_PER_WORD),
    chunk_overlap_tokens: Math.ceil(DEFAULT_CHUNKING.overlapWords * TOKENS_PER_WORD),
  },
};

export function presentVectorStore(row: VectorStoreRow) {
  const counts = { in_progress: row.in_progress, completed: row.completed, failed: row.failed, cancelled: 0 };
  return {
    id: row.id,
    object: 'vector_store' as const,
    created_at: unixSeconds(row.created_at),
    name: row.name,
    description: row.description,
    usage_bytes: row.usage_bytes,
    file_counts: { ...counts, total: row.in_progress + row.completed + row.failed },
    status: row.in_progress > 0 ? ('in_progress' as const) : ('completed' as const),
    last_active_at: unixSeconds(row.created_at),
    metadata: row.metadata,
    expires_after: null,
    expires_at: null,
  };
}

export function presentFile(row: FileRow) {
  return {
    id: row.id,
    object: 'file' as const,
    bytes: row.bytes,
    created_at: unixSeconds(row.created_at),
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed' as const,
  };
}

export function presentVectorStoreFile(row: VectorStoreFileRow) {
  return {
    id: row.file_id,
    object: 'vector_store.file' as const,
    usage_bytes: row.usage_bytes,
    created_at: unixSeconds(row.created_at),
    vector_store_id: row.collection_id,
    status: row.status,
    last_error: row.last_error,
    attributes: row.attributes,
    chunking_strategy: CHUNKING_STRATEGY,
  };
}

/** OpenAI's cursor list. */
export function presentList<T, R extends { id: string }>(window: Window<T>, present: (row: T) => R) {
  const data = window.rows.map(present);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: window.hasMore,
  };
}

export function presentSearch(query: string, hits: SearchHit[]) {
  return {
    object: 'vector_store.search_results.page' as const,
    search_query: query,
    data: hits.map((hit) => ({
      file_id: hit.fileId,
      filename: hit.filename,
      score: hit.source.score,
      attributes: hit.attributes,
      // The passage itself (the chunk the ranking chose).
      content: [{ type: 'text' as const, text: hit.source.content }],
    })),
    has_more: false as const,
    next_page: null,
  };
}
