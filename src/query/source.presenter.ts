import type { RetrievedSource } from '../retrieval/retriever.js';

export interface SourceRecord {
  document_id: string;
  chunk_id: string;
  title: string;
  snippet: string;
  score: number;
  metadata: Record<string, string | number>;
}

export function presentSource(source: RetrievedSource): SourceRecord {
  return {
    document_id: source.documentId,
    chunk_id: source.chunkId,
    title: source.title,
    snippet: source.snippet,
    score: Math.round(source.score * 10_000) / 10_000,
    metadata: source.metadata,
  };
}
