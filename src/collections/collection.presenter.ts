import { toIsoMicros } from '../common/timestamps.js';
import type { CollectionWithCounts } from './collections.repository.js';
import type { CollectionResponse } from './dto/collection.response.js';

export function presentCollection(collection: CollectionWithCounts): CollectionResponse {
  return {
    id: collection.id,
    name: collection.name,
    description: collection.description,
    metadata: collection.metadata,
    document_count: collection.documentCount,
    chunk_count: collection.chunkCount,
    created_at: toIsoMicros(collection.createdAt),
  };
}
