import { Module } from '@nestjs/common';
import { Bm25Retriever } from './bm25.retriever.js';
import { CorpusIndexer } from './corpus-indexer.js';
import { RETRIEVER } from './retriever.js';

/** Search over chunked documents. Inject `RETRIEVER` to search; `CorpusIndexer` writes the index. */
@Module({
  providers: [Bm25Retriever, CorpusIndexer, { provide: RETRIEVER, useExisting: Bm25Retriever }],
  exports: [RETRIEVER, Bm25Retriever, CorpusIndexer],
})
export class RetrievalModule {}
