import type { RetrievedSource } from '../retrieval/retriever.js';
import type { SourceResponse } from './dto/query.response.js';

export function presentSource(source: RetrievedSource): SourceResponse {
  return {
    document_id: source.documentId,
    chunk_id: source.chunkId,
    title: source.title,
    snippet: source.snippet,
    score: Math.round(source.score * 10_000) / 10_000,
    metadata: source.metadata,
    start: source.start,
    end: source.end,
    page: source.page,
  };
}
