import type { AnswerInput, Answerer } from './answerer.js';
import { NOTHING_FOUND } from './answerer.js';
import { readableBlocks } from './readable-passage.js';
import { askedKind, holdsKind } from './answer-kind.js';
import { isPleasantry, QuestionWeights, wordsOf } from './relevance.js';
import { sentencesOf } from './sentences.js';

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
  /** A second sentence is added when it scores at least this share of the first's... */
  secondShare: number;
  /** ...and the answer stays within this many words. */
  maxWords: number;
  /** Sentences shorter than this many words (headings, captions) are not quoted. */
  minWords: number;
  /** Added when the sentence holds what the question asks for: a date for "when", a number for "how many"... */
  kindBonus: number;
  /** A first sentence without what the question asks for (a date for "when") always gets a second one. */
  secondWhenKindMissing: boolean;
  /** Added times the share of the question's adjacent word pairs the sentence holds too. */
  pairBonus: number;
  /** The sentence after the first, in its passage, scores this much more as the second. */
  nextBonus: number;
}

/**
 * Tuned on SQuAD v1.1 dev articles (`npm run bench -- answers`, 16 articles): the first
 * sentence holds the answer in 73.5 % of the questions, the answer in 78.3 %, median 37 words. One
 * sentence only (no second) scored 73.5 % / 73.5 % / 28 words, token F1 16.4 % against 14.3 %.
 */
export const DEFAULT_EXTRACTIVE: ExtractiveOptions = {
  passages: 3,
  passageFloor: 0.3,
  sentenceFloor: 0.2,
  passageShare: 0.3,
  rankPenalty: 0.05,
  secondShare: 0.6,
  maxWords: 60,
  minWords: 3,
  kindBonus: 0.2,
  secondWhenKindMissing: true,
  pairBonus: 0.2,
  nextBonus: 0.5,
};

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
 * The default answerer, no model needed: the one or two sentences of the best passages that hold most
 * of the question's weight (its words, by their idf in the searched corpus), most relevant first, each
 * cited by its source's number. Sentences come from the passage's prose (`readableBlocks`: no Markdown
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
    // A second sentence when the first is not clearly the answer (a close runner-up, or a first that
    // lacks what the question asks for): the best of the rest, the one that follows the first favoured
    // (an answer often comes in the sentence after the one that repeats the question's words).
    const bonus = (c: Candidate) => (c.citation === best.citation && c.order === best.order + 1 ? o.nextBonus : 0);
    const second = rest
      .filter((c) => c.text !== best.text)
      .reduce<Candidate | undefined>(
        (top, c) => (!top || c.score + bonus(c) > top.score + bonus(top) ? c : top),
        undefined,
      );
    const unsure = second && (second.score >= o.secondShare * best.score || (o.secondWhenKindMissing && !best.fits));
    return second && unsure && best.words + second.words <= o.maxWords ? [best, second] : [best];
  }
}
