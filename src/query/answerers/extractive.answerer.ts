import type { AnswerInput, Answerer } from './answerer.js';
import { NOTHING_FOUND } from './answerer.js';
import { readableBlocks } from './readable-passage.js';
import { askedKind, holdsKind } from './answer-kind.js';
import { isPleasantry, QuestionWeights, wordsOf } from './relevance.js';
import { sentencesOf } from './sentences.js';
import { type ClauseWeights, type Piece, piecesOf } from './clauses.js';

export interface ExtractiveOptions {
  /** Sentences are taken from this many of the best passages. */
  passages: number;
  /** A passage holding less than this share of the question's weight answers nothing of it. */
  passageFloor: number;
  /** Nor does a sentence holding less than this share. */
  sentenceFloor: number;
  /** A sentence's score: its share of the question's weight, plus this times its passage's share... */
  passageShare: number;
  /** ...minus this per place its passage is below the first. */
  rankPenalty: number;
  /** The answer stays within this many words. */
  maxWords: number;
  /** Sentences shorter than this many words (headings, captions) are not quoted. */
  minWords: number;
  /** Added when the sentence holds what the question asks for: a date for "when", a number for "how many"... */
  kindBonus: number;
  /** Added times the share of the question's adjacent word pairs the sentence holds too. */
  pairBonus: number;
  /** How sure the first sentence is: a logistic model of its score, its lead on the next, and the rest. */
  sureness: Sureness;
  /** What makes a clause hold the answer (see `piecesOf`). */
  clauses: ClauseWeights;
  /** The chance that the second best sentence holds the answer when the best does not (measured). */
  secondHolds: number;
  /**
   * The answer's pieces are chosen for the most of: its expected token F1 (its chance of holding the
   * answer, times 2g / (words + g) for an answer of `answerWords` words g), plus `firstWeight` times the
   * chance that its first piece holds the answer, plus `holdWeight` times the chance that it does at all.
   */
  answerWords: number;
  firstWeight: number;
  holdWeight: number;
}

/**
 * Tuned on 16 SQuAD v1.1 dev articles (`npm run bench -- answers`; see docs/BENCHMARKS.md).
 * The sentence score's weights were tuned by hand on all 16 (issue 21's first round). The clause model,
 * the sureness model and the weights of `pieces` (round two) were fitted on 8 of the articles only
 * (every other one in the file's order, from Super_Bowl_50) and checked on the other 8: see
 * docs/BENCHMARKS.md (Answers) for the figures of both halves. Round three split sentences also at
 * relative pronouns, subordinating conjunctions and prepositions (`clausesOf`), refitted the clause
 * model with 13 more features on the same 8 articles, and chose `secondHolds`, `answerWords`,
 * `firstWeight` and `holdWeight` on a grid over those 8 (the best token F1 keeping their first-sentence
 * hit and containment, the shortest median of the points within 0.1 point of it).
 */
export const DEFAULT_EXTRACTIVE: ExtractiveOptions = {
  passages: 3,
  passageFloor: 0.3,
  sentenceFloor: 0.2,
  passageShare: 0.3,
  rankPenalty: 0.05,
  maxWords: 80,
  minWords: 3,
  kindBonus: 0.2,
  pairBonus: 0.2,
  sureness: {
    intercept: -1.55,
    score: 2.16,
    lead: 4.23,
    kind: -0.34,
    kindMissing: -0.34,
    candidates: -0.29,
    rank: -0.45,
  },
  secondHolds: 0.3,
  answerWords: 3,
  firstWeight: 0.2,
  holdWeight: 0.8,
  clauses: {
    coverage: 0.36,
    top: -0.14,
    near1: 0.24,
    near2: 0.24,
    far: -0.34,
    before: -0.2,
    fits: 1.52,
    novel: 0.39,
    length: -0.11,
    aside: -0.27,
    first: 0.22,
    last: 0.38,
    names: 0.29,
    nameForWhat: 0.83,
    number: -0.02,
    numberForHowMany: -0.05,
    none: 0.09,
    share: 0.45,
    topNovel: 0.32,
    mixed: 0.72,
    echo: -0.82,
    previous: 0.75,
    next: 0.36,
    weightAndName: -0.18,
    focus: 0.9,
    place: 0.37,
    reason: 0.23,
    subjectBefore: 0.3,
    subjectAfter: -0.28,
    preposition: 1.01,
  },
};

/** The weights of the logistic model of "the first sentence holds the answer" (see `sureOf`). */
export interface Sureness {
  intercept: number;
  /** Times the first sentence's score. */
  score: number;
  /** Times its lead over the next candidate's score. */
  lead: number;
  /** When the question asks for a kind (a date, a number, a person); when the first sentence lacks it. */
  kind: number;
  kindMissing: number;
  /** Times the log of the number of candidate sentences. */
  candidates: number;
  /** Times the place of its passage (0 for the first). */
  rank: number;
}

interface Candidate {
  text: string;
  citation: number;
  score: number;
  words: number;
  /** Holds what the question asks for (or the question asks for nothing in particular). */
  fits: boolean;
  /** Its place among its passage's sentences. */
  order: number;
}

/**
 * The default answerer, no model needed: the sentence of the best passages that holds most of the
 * question's weight (its words, by their idf in the searched corpus), cut to the run of its clauses most
 * likely to hold the answer, and a piece of the second best when the first is not sure to (`pieces`),
 * each cited by its source's number. Sentences come from the passage's prose (`readableBlocks`: no Markdown
 * markers, no rows of navigation links), split by a real sentence segmenter (`sentencesOf`). When no
 * passage holds enough of the question, or the question only greets, it says that nothing answers it
 * and cites nothing.
 */
export class ExtractiveAnswerer implements Answerer {
  constructor(private readonly options: ExtractiveOptions = DEFAULT_EXTRACTIVE) {}

  async *answer(input: AnswerInput): AsyncIterable<string> {
    const sentences = this.choose(input);
    if (sentences.length === 0) {
      yield NOTHING_FOUND;
      return;
    }
    for (const [position, sentence] of sentences.entries()) {
      yield `${position === 0 ? '' : ' '}${sentence.text} [${sentence.citation}]`;
    }
  }

  /** The sentences of the answer, best first; none when nothing answers the question. */
  private choose({ question, passages, terms, unseenWeight }: AnswerInput): Candidate[] {
    const o = this.options;
    if (isPleasantry(question)) return [];
    const weights = new QuestionWeights(question, terms, unseenWeight);
    if (!weights.hasWords || weights.missesName) return [];
    const kind = askedKind(question);
    const candidates: Candidate[] = [];
    passages.slice(0, o.passages).forEach((passage, index) => {
      const blocks = readableBlocks(passage.content);
      const passageCoverage = weights.coverage(blocks.join(' '));
      if (passageCoverage < o.passageFloor) return;
      let order = 0;
      for (const block of blocks) {
        for (const { text } of sentencesOf(block)) {
          order++;
          const words = wordsOf(text).length;
          if (words < o.minWords) continue;
          const coverage = weights.coverage(text);
          if (coverage < o.sentenceFloor) continue;
          const fits = kind ? holdsKind(kind, text, question) : true;
          const score =
            coverage +
            o.passageShare * passageCoverage -
            o.rankPenalty * index +
            o.pairBonus * weights.pairShare(text) +
            (kind && fits ? o.kindBonus : 0);
          candidates.push({ text, citation: index + 1, score, words, fits, order });
        }
      }
    });
    candidates.sort((a, b) => b.score - a.score);
    if (candidates.length === 0) return [];
    const [best, ...rest] = candidates;
    const second = rest.find((c) => c.text !== best.text);
    const sure = this.sureOf(best, rest[0], candidates.length, kind !== null);
    const [first, next] = this.pieces(
      piecesOf(best.text, question, weights, kind, o.clauses, o.maxWords),
      second ? piecesOf(second.text, question, weights, kind, o.clauses, o.maxWords) : [],
      sure,
    );
    const answer = [{ ...best, text: first.text, words: first.words }];
    if (next && second) answer.push({ ...second, text: next.text, words: next.words });
    return answer;
  }

  /**
   * The best sentence cut to the clauses most likely to hold the answer, and, when it is not sure
   * enough to, a piece of the second best: the pair (or the one) with the most expected token F1 plus
   * the weighted chances of holding the answer first and at all (see `ExtractiveOptions`).
   */
  private pieces(firsts: Piece[], seconds: Piece[], sure: number): [Piece, Piece?] {
    const o = this.options;
    const g = o.answerWords;
    // `firsts` always holds the whole sentence (see piecesOf).
    let top: { value: number; first: Piece; second?: Piece } = { value: -Infinity, first: firsts[0] };
    // Shortest first, so that the pairs past `maxWords` are cut off at once.
    const shortest = [...seconds].sort((a, b) => a.words - b.words);
    for (const first of firsts) {
      for (const second of [undefined, ...shortest]) {
        const words = first.words + (second?.words ?? 0);
        if (second && words > o.maxWords) break;
        const holdsFirst = sure * first.chance;
        const holds = holdsFirst + (second ? (1 - sure) * o.secondHolds * second.chance : 0);
        const value = (holds * 2 * g) / (words + g) + o.firstWeight * holdsFirst + o.holdWeight * holds;
        if (value > top.value) top = { value, first, second };
      }
    }
    return [top.first, top.second];
  }

  /** The chance (0 to 1) that the best candidate holds the answer, by the sureness model. */
  private sureOf(best: Candidate, next: Candidate | undefined, count: number, asksKind: boolean): number {
    const s = this.options.sureness;
    const x =
      s.intercept +
      s.score * best.score +
      s.lead * (best.score - (next?.score ?? 0)) +
      (asksKind ? s.kind : 0) +
      (asksKind && !best.fits ? s.kindMissing : 0) +
      s.candidates * Math.log(count) +
      s.rank * (best.citation - 1);
    return 1 / (1 + Math.exp(-x));
  }
}
