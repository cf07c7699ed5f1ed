import { Inject, Injectable } from '@nestjs/common';
import { QuotaService, type Reservation } from '../billing/quota.service.js';
import type { Principal } from '../common/principal.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import { SearchGate } from '../retrieval/search-gate.js';
import { RETRIEVER, type RetrievedSource, type Retriever } from '../retrieval/retriever.js';
import { KnowledgeBaseService } from './knowledge-base.service.js';

export interface SearchRequest {
  text: string;
  domain?: string | null;
  collectionIds?: readonly string[] | null;
  topK: number;
  filter?: MetadataFilter | null;
  /** Aborts when the client goes: a search still waiting for its turn is then dropped (SearchGate). */
  signal?: AbortSignal;
}

export interface SearchOutcome {
  domain: string | null;
  sources: RetrievedSource[];
  /** Null when searches are free (SEARCH_CREDIT_COST 0): nothing was spent or written to the ledger. */
  reservation: Reservation | null;
}

/** Retrieval without an answer: the query's checks in the query's order (404, 403, then 402 when metered). */
@Injectable()
export class SearchService {
  constructor(
    private readonly knowledgeBases: KnowledgeBaseService,
    private readonly quota: QuotaService,
    @Inject(RETRIEVER) private readonly retriever: Retriever,
    private readonly gate: SearchGate,
  ) {}

  async search(caller: Principal, request: SearchRequest): Promise<SearchOutcome> {
    const knowledgeBase = await this.knowledgeBases.resolve(caller, request.domain, request.collectionIds);
    const reservation =
      this.quota.cost('search') > 0 ? await this.quota.spend(caller, 'search', knowledgeBase.domain) : null;
    try {
      const sources = await this.gate.run(
        caller.organizationId,
        () =>
          this.retriever.search(request.text, knowledgeBase.corpus, {
            limit: request.topK,
            filter: request.filter ?? undefined,
          }),
        request.signal,
      );
      if (reservation) this.quota.settle(reservation);
      return { domain: knowledgeBase.domain, sources, reservation };
    } catch (error) {
      if (reservation) await this.quota.refund(reservation);
      throw error;
    }
  }
}
