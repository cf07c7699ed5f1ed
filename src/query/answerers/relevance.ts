import { stem as stem2 } from 'porter2';
import type { QueryTerm } from '../../retrieval/retriever.js';

/** PostgreSQL's English stop words (tsearch_data/english.stop), which the search never indexes. */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is are ' +
    'was were be been being have has had having do does did doing a an the and but if or because as until while ' +
    'of at by for with about against between into through during before after above below to from up down in out ' +
    'on off over under again further then once here there when where why how all any both each few more most ' +
    'other some such no nor not only own same so than too very s t can will just don should now'
  )
    .split(' ')
    .filter(Boolean),
);

/** True for an English stop word (PostgreSQL's list, which the search never indexes). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Words that greet or thank and ask nothing: a question made only of them is answered that nothing answers it. */
const PLEASANTRIES = new Set(
  (
    'hi hello hey hiya howdy yo greetings morning afternoon evening good day thanks thank thx ty cheers bye ' +
    'goodbye ok okay please'
  )
    .split(' ')
    .filter(Boolean),
);

/**
 * Lower-cased words and numbers as PostgreSQL's parser reads them: hyphens and slashes separate (see
 * text-search.ts), dots and @ inside a token join ("u.s", "e.g", "4.7", "security@example.com").
 */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{M}\p{N}]+(?:[.@][\p{L}\p{M}\p{N}]+)*/gu) ?? [];
}

/** True when the question holds no word but greetings, thanks and stop words ("hi", "thanks!"). */
export function isPleasantry(question: string): boolean {
  const words = wordsOf(question).filter((word) => !STOP_WORDS.has(word));
  return words.length > 0 && words.every((word) => PLEASANTRIES.has(word));
}

/** Stems of words seen, shared by all questions: the words of a language are few. */
const STEMS = new Map<string, string>();

/**
 * The Snowball (Porter2) English stem of a lower-cased word: the stem PostgreSQL's `english`
 * configuration indexes, so that a sentence's words meet the ranking's terms ("rating" and "rate").
 */
export function stemOf(word: string): string {
  let stem = STEMS.get(word);
  if (stem === undefined) {
    // PostgreSQL stems words only: "u.s", "4.7" and addresses are indexed as they are.
    stem = /^[\p{L}\p{M}]+$/u.test(word) ? stem2(word) : word;
    if (STEMS.size < 200_000) STEMS.set(word, stem);
  }
  return stem;
}

function pairsOf(text: string): string[] {
  const stems = wordsOf(text)
    .filter((word) => !STOP_WORDS.has(word))
    .map(stemOf);
  return stems.slice(1).map((stem, i) => `${stems[i]} ${stem}`);
}

/**
 * Measures how much of a question a piece of text answers: the share of the question's weight (each
 * term's idf in the searched corpus, as the ranking used it) found among the text's words. Question
 * words the corpus lacks count at the highest idf: a question about something absent is covered by
 * nothing, even if its commoner words are everywhere.
 */
export class QuestionWeights {
  private readonly terms: QueryTerm[];
  private readonly total: number;
  private readonly pairs: Set<string>;
  /**
   * The question names things (capitalised words past its first) and the corpus holds none of them:
   * "What is the capital of Atlantis?" over documents that never mention Atlantis. Nothing answers it.
   * (One name found is enough to go on: "Tesla in Gospic" over a text that spells it "Gospić".)
   */
  readonly missesName: boolean;

  /**
   * `terms`: the query's stemmed terms found in the corpus, with their weights (retrieval's statistics);
   * `absentWeight`: the weight of a question word found in none of them. Without statistics (`terms`
   * omitted), every question word weighs 1.
   */
  constructor(question: string, terms?: readonly QueryTerm[], absentWeight = 1) {
    const stems = [
      ...new Set(
        wordsOf(question)
          .filter((word) => !STOP_WORDS.has(word))
          .map(stemOf),
      ),
    ];
    const known = terms ? terms.filter((term) => term.weight > 0) : stems.map((stem) => ({ term: stem, weight: 1 }));
    const absent = terms ? stems.filter((stem) => !known.some((term) => term.term === stem)) : [];
    this.terms = known;
    this.pairs = new Set(pairsOf(question));
    const names = (question.match(/(?<=\S\s+)\p{Lu}[\p{L}\p{M}\p{N}]+/gu) ?? []).map((name) =>
      stemOf(name.toLowerCase()),
    );
    this.missesName = names.length > 0 && names.every((stem) => absent.includes(stem));
    this.total = known.reduce((sum, term) => sum + term.weight, 0) + absent.length * absentWeight;
  }

  /** True when the question has a word to look for at all. */
  get hasWords(): boolean {
    return this.total > 0;
  }

  /** The share (0 to 1) of the question's pairs of adjacent words (stop words aside) that `text` holds too. */
  pairShare(text: string): number {
    if (this.pairs.size === 0) return 0;
    let found = 0;
    for (const pair of new Set(pairsOf(text))) if (this.pairs.has(pair)) found++;
    return found / this.pairs.size;
  }

  /** The share (0 to 1) of the question's weight that the words of `text` hold. */
  coverage(text: string): number {
    if (this.total === 0) return 0;
    const stems = new Set(wordsOf(text).map(stemOf));
    let found = 0;
    for (const term of this.terms) if (stems.has(term.term)) found += term.weight;
    return found / this.total;
  }
}
