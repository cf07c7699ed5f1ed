import type { RetrievedSource } from '../retrieval/retriever.js';
import type { SearchResult } from './tool-schemas.js';

const URL_FIELDS = ['url', 'source_url'];

/** A document's web address, when its metadata carries one (`url` or `source_url`, http or https); else null. */
export function urlOf(metadata: Record<string, string | number>): string | null {
  for (const field of URL_FIELDS) {
    const value = metadata[field];
    if (typeof value === 'string' && /^https?:\/\//i.test(value)) return value;
  }
  return null;
}

/** A passage as the MCP tools give it: `id` is the passage's, which fetch accepts. */
export function presentResult(source: RetrievedSource): SearchResult {
  return {
    id: source.chunkId,
    title: source.title,
    url: urlOf(source.metadata),
    text: source.content,
    score: Math.round(source.score * 10_000) / 10_000,
    document_id: source.documentId,
    start: source.start,
    end: source.end,
    page: source.page,
  };
}
