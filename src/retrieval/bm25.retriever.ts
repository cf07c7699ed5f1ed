import { Injectable } from '@nestjs/common';
import type { MetadataFilter } from './metadata-filter.js';
import {
  type Retrieval,
  type RetrievedSource,
  type Retriever,
  type SearchOptions,
  type Corpus,
  corpusIdsOf,
} from './retriever.js';
import { SearchIndexRepository } from './search-index.repository.js';
import { anyOf, atLeast, except } from './text-search.js';

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
  /** A title occurrence counts as this many body occurrences (BM25F-style, before saturation). */
  titleWeight: number;
  /** Weight of a term that comes only from `contextQueries`, relative to one from the query itself. */
  contextWeight: number;
  /** At most this many query terms are used: the most informative ones (long queries stay cheap). */
  maxTerms: number;
  /** Chunks scored per round, estimated from document frequencies (see `rank`). */
  roundBudget: number;
  /** Chunks scored per search at most; beyond it the result is the best of what was scored. */
  candidateCap: number;
  /**
   * A round stops taking terms once those left could add less than this share of one occurrence of its
   * weakest term (see `settles`); 0 never stops early. Saves work; never changes a result.
   */
  settleShare: number;
  /**
   * Above this many postings (the summed document frequencies of the common terms), the round of common
   * words is approximate in two more ways (see `commonRound`): GIN reads the whole posting list of every
   * word in it, so its cost grows with the corpus while every other round's is bounded by `candidateCap`.
   * SciFact's corpus (5,183 abstracts) never reaches it, so its figures are those of the exact rounds.
   */
  commonPostingBudget: number;
  /** Past `commonPostingBudget`, the common round combines at most this many terms (MAX_COMMON_TERMS below it). */
  commonTermsAtScale: number;
  /**
   * A corpus of at most this many chunks is searched by testing each of its chunks instead of through the
   * GIN index (SearchIndexRepository.scoreChunks, `scanCorpus`): its cost is then its own, whatever the
   * other tenants of the database hold. Testing 2,000 chunks costs a few milliseconds at most.
   */
  corpusScanChunks: number;
}

/**
 * Tuned on the SciFact training queries only (809 claims; the test split is held out). nDCG@10 on them:
 * Anserini's k1 0.9, b 0.4: 0.693; k1 1.2, b 0.75 (Robertson's classic): 0.700; with a title weight of 2:
 * 0.701. Neighbours (k1 1.0 to 1.4, b 0.5 to 0.9, title 1 to 3) all land within 0.69 to 0.70, so this
 * is a plateau rather than a lucky point.
 */
export const DEFAULT_BM25_PARAMS: Bm25Params = {
  k1: 1.2,
  b: 0.75,
  titleWeight: 2,
  contextWeight: 0.3,
  maxTerms: 64,
  roundBudget: 1500,
  candidateCap: 5000,
  settleShare: 0.25,
  commonPostingBudget: 200_000,
  commonTermsAtScale: 5,
  corpusScanChunks: 2000,
};

/** In the capped last round, how many of the remaining terms are combined (C(8, 4) = 70 groups at most). */
const MAX_COMMON_TERMS = 8;

interface QueryTerm {
  term: string;
  /** weight × idf: the term's share of a score before tf saturation. */
  weightedIdf: number;
  df: number;
  /** What the term weighs in an answer's sentences: its idf, once, less when it comes from context only. */
  answerWeight: number;
}

interface QueryPlan {
  terms: QueryTerm[];
  avgLength: number;
  chunks: number;
}

interface Hit {
  chunkId: string;
  documentId: string;
  score: number;
}

/**
 * BM25 over the chunks of one corpus (a domain, or one or several collections ranked as one: their
 * statistics are summed, so the scores are those of a single collection holding all their documents), entirely in PostgreSQL. The GIN index on `search_vector` finds
 * candidates with an OR of the stemmed query terms; each candidate is scored with BM25 from the corpus's
 * stored statistics (`term_stats`, `corpus_stats`), the term frequencies being read from its tsvector.
 */
@Injectable()
export class Bm25Retriever implements Retriever {
  params: Bm25Params = DEFAULT_BM25_PARAMS;

  constructor(private readonly index: SearchIndexRepository) {}

  async search(query: string, corpus: Corpus, options: SearchOptions): Promise<RetrievedSource[]> {
    return (await this.retrieve(query, corpus, options)).sources;
  }

  async retrieve(query: string, corpus: Corpus, options: SearchOptions): Promise<Retrieval> {
    const limit = Math.max(1, Math.floor(options.limit));
    const corpusIds = corpusIdsOf(corpus);
    const plan = await this.plan(corpusIds, query, options.contextQueries ?? []);
    if (!plan) return { sources: [], terms: [], unseenWeight: 1 };
    const hits = await this.rank(corpusIds, plan, limit, options.filter);
    return {
      sources: await this.present(hits, plan),
      terms: plan.terms.map((t) => ({ term: t.term, weight: t.answerWeight })),
      unseenWeight: idf(plan.chunks, 0),
    };
  }

  /** The query's stemmed terms that occur in the corpus, with their weights; null when none do. */
  private async plan(corpusIds: readonly string[], query: string, contextQueries: string[]): Promise<QueryPlan | null> {
    const rows = await this.index.termStats(corpusIds, query, contextQueries);
    if (rows.length === 0) return null;
    const { chunk_count: chunks, total_tokens: tokens } = rows[0];
    const { contextWeight, maxTerms } = this.params;
    const terms = rows
      .map((row) => {
        const termIdf = idf(chunks, row.df);
        // A repeated query word counts once per occurrence (as in Lucene); context terms count less.
        const weight = row.main_tf + contextWeight * row.context_tf;
        const answerWeight = (row.main_tf > 0 ? 1 : contextWeight) * termIdf;
        return { term: row.term, weightedIdf: weight * termIdf, df: row.df, answerWeight };
      })
      .sort((a, b) => b.weightedIdf - a.weightedIdf)
      .slice(0, maxTerms);
    return { terms, avgLength: Math.max(1, tokens / chunks), chunks };
  }

  /**
   * Exact top-k by BM25 without scoring every chunk that shares a common word with the query
   * (MaxScore-style pruning). Terms are taken most informative first, in rounds of about `roundBudget`
   * candidate chunks (estimated from document frequencies); each round fully scores the chunks that
   * hold one of its terms and none of the earlier rounds'. A chunk that holds none of the terms used so
   * far can score at most the sum of the remaining terms' upper bounds (weight × idf × (k1 + 1)), so
   * once the k-th best score reaches that sum the ranking is final.
   * A round also ends early when the terms after it are negligible (`settles`).
   *
   * The cap: at most about `candidateCap` chunks are scored per search. When the terms left are so
   * common that even one of them would pass it (a question made of everyday words), the last round
   * takes only the chunks holding several of them: the smallest k such that, by their document
   * frequencies, about `candidateCap` chunks hold k of them. Chunks holding fewer are skipped; they
   * share the fewest of the query's words, so they are the least likely to belong in the top k. Such a
   * search is approximate; every other one is exact.
   *
   * A metadata filter narrows every round to the matching documents (in the ranking statement itself),
   * so the bounds still hold and the top k are the best matching documents, not fewer.
   */
  private async rank(
    corpusIds: readonly string[],
    plan: QueryPlan,
    limit: number,
    filter?: MetadataFilter,
  ): Promise<Hit[]> {
    const { terms } = plan;
    const { roundBudget, candidateCap, k1 } = this.params;
    const upperBound = (from: number) => terms.slice(from).reduce((sum, t) => sum + t.weightedIdf * (k1 + 1), 0);
    const best = new Map<string, Hit>();
    const merge = (hits: Hit[]) => {
      for (const hit of hits) {
        const known = best.get(hit.documentId);
        if (!known || byRank(hit, known) < 0) best.set(hit.documentId, hit);
      }
    };
    const kthScore = () => {
      const ranked = [...best.values()].sort(byRank);
      return ranked.length >= limit ? ranked[limit - 1].score : -Infinity;
    };
    let next = 0;
    let scored = 0;
    while (next < terms.length) {
      const budget = candidateCap - scored;
      const exclude = terms.slice(0, next).map((t) => t.term);
      if (terms[next].df > budget) {
        const round = this.commonRound(terms.slice(next), plan.chunks, budget, kthScore());
        if (round) merge(await this.scoreRound(corpusIds, plan, except(round, exclude), limit, filter));
        break;
      }
      let end = next + 1;
      let estimate = terms[next].df;
      while (
        end < terms.length &&
        estimate + terms[end].df <= Math.min(roundBudget, budget) &&
        !this.settles(terms, end, estimate, limit)
      )
        estimate += terms[end++].df;
      merge(
        await this.scoreRound(
          corpusIds,
          plan,
          except(anyOf(terms.slice(next, end).map((t) => t.term)), exclude),
          limit,
          filter,
        ),
      );
      next = end;
      scored += estimate;
      if (kthScore() >= upperBound(next)) break;
    }
    return [...best.values()].sort(byRank).slice(0, limit);
  }

  /**
   * The last round's tsquery over the common terms left (`left`, each too common for the budget), or
   * null when there is none to run: the chunks holding several of them (`severalOf`).
   *
   * When their posting lists hold more than `commonPostingBudget` entries (a corpus of hundreds of
   * thousands of chunks), two approximations keep the round's cost from growing with the corpus:
   * - the round is skipped when the earlier rounds already filled the top k with scores at least what a
   *   chunk holding the round's k strongest terms once each (at average length) would score: the chunks it
   *   would add hold none of the question's informative words, and would rarely pass the k-th;
   * - otherwise it combines the `commonTermsAtScale` most informative of them instead of MAX_COMMON_TERMS
   *   (GIN checks every chunk holding any of them against every group of the tsquery: C(5, 2) = 10 groups
   *   at most instead of 70, five posting lists instead of eight).
   * docs/BENCHMARKS.md ("One big tenant") has what each saves at 1M chunks and how much of the top 10 it changes.
   */
  private commonRound(left: QueryTerm[], chunks: number, budget: number, kthScore: number): string | null {
    const atScale = left.slice(0, MAX_COMMON_TERMS).reduce((sum, t) => sum + t.df, 0) > this.params.commonPostingBudget;
    const common = left.slice(0, atScale ? this.params.commonTermsAtScale : MAX_COMMON_TERMS);
    if (common.length < 2) return null;
    const k = this.severalOf(common, chunks, budget);
    if (atScale) {
      const likely = common
        .map((t) => t.weightedIdf)
        .sort((a, b) => b - a)
        .slice(0, k)
        .reduce((sum, w) => sum + w, 0);
      if (kthScore >= likely) return null;
    }
    return atLeast(
      k,
      common.map((t) => t.term),
    );
  }

  /**
   * Whether a round ending before terms[end] is expected to settle the ranking by itself, so that adding the
   * weaker terms after it would only score chunks that cannot reach the top k: its terms are expected to
   * match at least `limit` chunks, and all the terms left could add less than `settleShare` of what one
   * occurrence of the round's weakest term scores in a chunk of average length (its weighted idf).
   * (On the query-floor bench's question, one rare word and three in every document, the first round
   * scored 100 chunks instead of 500: the ranking statement went from 2.9 to 1.3 ms.)
   * A guess that saves work, never one that changes a result: when it is wrong (the k-th score after the
   * round is below the bound of the terms left), the next round scores them.
   */
  private settles(terms: QueryTerm[], end: number, estimate: number, limit: number): boolean {
    if (estimate < limit) return false;
    const weakest = terms[end - 1].weightedIdf;
    const { k1, settleShare } = this.params;
    const left = terms.slice(end).reduce((sum, t) => sum + t.weightedIdf * (k1 + 1), 0);
    return left < settleShare * weakest;
  }

  /**
   * The smallest k (at least 2) for which about `budget` chunks or fewer are expected to hold k of the
   * terms, taking the terms to occur independently with probability df / chunks.
   */
  private severalOf(terms: QueryTerm[], chunks: number, budget: number): number {
    // holding[j]: probability that a chunk holds exactly j of the terms.
    let holding = [1];
    for (const term of terms) {
      const p = Math.min(1, term.df / chunks);
      holding = [...holding, 0].map((q, j) => q * (1 - p) + (j > 0 ? holding[j - 1] * p : 0));
    }
    for (let k = 2; k < terms.length; k++) {
      const expected = chunks * holding.slice(k).reduce((sum, q) => sum + q, 0);
      if (expected <= budget) return k;
    }
    return terms.length;
  }

  /**
   * Scores the chunks matching `tsquery` against all the plan's terms (see SearchIndexRepository.scoreChunks);
   * returns the best chunk of each of the top `limit` documents.
   */
  private async scoreRound(
    corpusIds: readonly string[],
    plan: QueryPlan,
    tsquery: string,
    limit: number,
    filter?: MetadataFilter,
  ): Promise<Hit[]> {
    const { k1, b, titleWeight } = this.params;
    const weights = {
      scanCorpus: plan.chunks <= this.params.corpusScanChunks,
      terms: plan.terms.map((t) => t.term),
      weightedIdfs: plan.terms.map((t) => t.weightedIdf),
      k1,
      b,
      avgLength: plan.avgLength,
      titleWeight,
    };
    const rows = await this.index.scoreChunks(corpusIds, tsquery, weights, limit, filter);
    return rows.map((row) => ({ chunkId: row.chunk_id, documentId: row.document_id, score: row.score }));
  }

  private async present(hits: Hit[], plan: QueryPlan): Promise<RetrievedSource[]> {
    if (hits.length === 0) return [];
    const rows = await this.index.chunksWithSnippets(
      hits.map((hit) => hit.chunkId),
      anyOf(plan.terms.map((t) => t.term)),
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return hits.flatMap((hit) => {
      const row = byId.get(hit.chunkId);
      if (!row) return []; // deleted between ranking and presenting
      return [
        {
          documentId: row.document_id,
          chunkId: row.id,
          title: row.title,
          content: row.content,
          snippet: row.snippet.replace(/\s+/g, ' ').trim(),
          score: Math.round(hit.score * 10_000) / 10_000,
          metadata: row.metadata,
          start: row.start_offset,
          end: row.end_offset,
          page: row.page,
        },
      ];
    });
  }
}

/** Lucene's BM25 idf: always positive, even for a term in most chunks. */
function idf(chunks: number, df: number): number {
  return Math.log(1 + (chunks - df + 0.5) / (df + 0.5));
}

/**
 * Best first; equal scores by chunk id, as the ranking statement orders them, so that which of two
 * tied chunks makes the top k does not depend on the round that found each.
 */
function byRank(a: Hit, b: Hit): number {
  return b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0);
}
