import { Module } from '@nestjs/common';
import { Bm25Retriever } from './bm25.retriever.js';
import { RETRIEVER } from './retriever.js';
import { SearchGate } from './search-gate.js';
import { SearchIndexRepository } from './search-index.repository.js';

/**
 * Search over chunked documents. Inject `RETRIEVER` to search (through `SearchGate`, per organization);
 * `SearchIndexRepository` writes the index.
 */
@Module({
  providers: [Bm25Retriever, SearchIndexRepository, SearchGate, { provide: RETRIEVER, useExisting: Bm25Retriever }],
  exports: [RETRIEVER, Bm25Retriever, SearchIndexRepository, SearchGate],
})
export class RetrievalModule {}
