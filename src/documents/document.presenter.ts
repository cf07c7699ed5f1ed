import { toIsoMicros } from '../common/timestamps.js';
import type { Document } from './document.entity.js';
import type { DocumentBatchResponse, DocumentResponse, DocumentWithContentResponse } from './dto/document.response.js';

/** The document's record; with its text only when asked (`GET` of one document). */
export function presentDocument(
  document: Document,
  withContent = false,
): DocumentResponse | DocumentWithContentResponse {
  return {
    id: document.id,
    title: document.title,
    collection_id: document.collectionId,
    metadata: document.metadata,
    content_type: document.contentType,
    size_bytes: document.sizeBytes,
    chunk_count: document.chunkCount,
    created_at: toIsoMicros(document.createdAt),
    ...(withContent ? { content: document.content } : {}),
  };
}

/** A stored batch, in the order given. */
export function presentDocumentBatch(documents: readonly Document[]): DocumentBatchResponse {
  return { results: documents.map((document) => presentDocument(document)) };
}
