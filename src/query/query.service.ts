import { Inject, Injectable } from '@nestjs/common';
import { type MeteredOperation, QuotaService, type Reservation } from '../billing/quota.service.js';
import type { Principal } from '../common/principal.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import { SearchGate } from '../retrieval/search-gate.js';
import { RETRIEVER, type RetrievedSource, type Retriever } from '../retrieval/retriever.js';
import { ANSWERER, type Answerer, type ConversationTurn } from './answerers/answerer.js';
import { KnowledgeBaseService } from './knowledge-base.service.js';

export interface Question {
  text: string;
  domain?: string | null;
  /** Collections to ask as one corpus (not with `domain`); absent: `default`, or a limited key's own. */
  collectionIds?: readonly string[] | null;
  topK: number;
  /** Only documents whose metadata match contribute passages. */
  filter?: MetadataFilter | null;
  operation: MeteredOperation;
  /** Chat: earlier turns, oldest first. Their user turns also widen the search. */
  history?: ConversationTurn[];
  /** Aborted when the client disconnects before its answer is complete. */
  signal?: AbortSignal;
}

/** Everything checked and paid for; only the answer's text is still to come. */
export interface PreparedAnswer {
  domain: string | null;
  sources: RetrievedSource[];
  reservation: Reservation;
  deltas: AsyncIterable<string>;
  signal?: AbortSignal;
  /** Set once the sources were written to the client (a stream's first event): the search is then delivered. */
  sourcesDelivered?: boolean;
}

const CONTEXT_TURNS = 3;

@Injectable()
export class QueryService {
  constructor(
    private readonly knowledgeBases: KnowledgeBaseService,
    private readonly quota: QuotaService,
    @Inject(RETRIEVER) private readonly retriever: Retriever,
    private readonly gate: SearchGate,
    @Inject(ANSWERER) private readonly answerer: Answerer,
  ) {}

  /**
   * The contract's order: the domain (404, then 403), then the quota (402), then the work. Everything
   * that can refuse happens here, before a streamed response writes its first byte. A failure after
   * the spend gives the credits back.
   */
  async prepare(caller: Principal, question: Question): Promise<PreparedAnswer> {
    const knowledgeBase = await this.knowledgeBases.resolve(caller, question.domain, question.collectionIds);
    const reservation = await this.quota.spend(caller, question.operation, knowledgeBase.domain);
    try {
      const contextQueries = (question.history ?? [])
        .filter((turn) => turn.role === 'user')
        .slice(-CONTEXT_TURNS)
        .map((turn) => turn.content);
      const { sources, terms, unseenWeight } = await this.gate.run(
        caller.organizationId,
        () =>
          this.retriever.retrieve(question.text, knowledgeBase.corpus, {
            limit: question.topK,
            contextQueries,
            filter: question.filter ?? undefined,
          }),
        question.signal,
      );
      const deltas = this.answerer.answer({
        question: question.text,
        passages: sources,
        terms,
        unseenWeight,
        history: question.history,
        signal: question.signal,
      });
      return { domain: knowledgeBase.domain, sources, reservation, deltas, signal: question.signal };
    } catch (error) {
      await this.quota.refund(reservation);
      throw error;
    }
  }

  /**
   * Reads the answer to the end, handing each delta to `onDelta`. Refunds if the answerer fails, or if
   * the client goes before receiving any of the answer; once part of it was delivered, the charge stands
   * (else reading every delta and hanging up before `done` would make answers free). A client that goes
   * after receiving the sources keeps paying for those, what `POST /v1/search/` costs
   * (SEARCH_CREDIT_COST): else hanging up after the first event would make searches free.
   */
  async complete(prepared: PreparedAnswer, onDelta?: (text: string) => void): Promise<string> {
    let answer = '';
    let delivered = false;
    try {
      for await (const delta of prepared.deltas) {
        prepared.signal?.throwIfAborted();
        answer += delta;
        if (onDelta) {
          onDelta(delta);
          delivered = true;
        }
      }
      prepared.signal?.throwIfAborted();
      this.quota.settle(prepared.reservation);
      return answer;
    } catch (error) {
      if (prepared.signal?.aborted && delivered) this.quota.settle(prepared.reservation);
      else if (prepared.signal?.aborted && prepared.sourcesDelivered)
        await this.quota.refundAllBut(prepared.reservation, this.quota.cost('search'));
      else await this.quota.refund(prepared.reservation);
      throw error;
    }
  }
}
