import { toIsoMicros } from '../common/timestamps.js';
import type { Document } from './document.entity.js';

export interface DocumentRecord {
  id: string;
  title: string;
  metadata: Record<string, string | number>;
  content_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
  content?: string;
}

export function presentDocument(document: Document, withContent = false): DocumentRecord {
  return {
    id: document.id,
    title: document.title,
    metadata: document.metadata,
    content_type: document.contentType,
    size_bytes: document.sizeBytes,
    chunk_count: document.chunkCount,
    created_at: toIsoMicros(document.createdAt),
    ...(withContent ? { content: document.content } : {}),
  };
}
