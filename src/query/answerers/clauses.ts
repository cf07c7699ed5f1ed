import type { AnswerKind } from './answer-kind.js';
import { holdsKind } from './answer-kind.js';
import { isStopWord, type QuestionWeights, stemOf, wordsOf } from './relevance.js';

/**
 * The clauses of a sentence: its pieces between a comma, semicolon or colon followed by a space, and
 * around a parenthesis or a dash set off by spaces. Never inside a token: "4,624", "U.S.", an address
 * or a URL has no space after its punctuation; a dash starts the clause it opens; nor between the day and the year of a date
 * ("February 7, 2016"). Joined back with single spaces, they are the sentence (its white space single).
 */
export function clausesOf(sentence: string): string[] {
  return sentence
    .split(/(?<=(?<!\d),|(?<=\d),(?!\s+\d)|[;:])\s+|\s+(?=[(\u2013\u2014])|(?<=\))\s+/u)
    .filter((clause) => clause !== '');
}

/** What each feature of a clause weighs in its chance of holding the answer (see `ClauseModel`). */
export interface ClauseWeights {
  /** Its share of the sentence's question weight. */
  coverage: number;
  /** It holds the most of the question's weight. */
  top: number;
  /** One, two, three or more clauses away from that one. */
  near1: number;
  near2: number;
  far: number;
  /** Before it. */
  before: number;
  /** It holds what the question asks for (a date for "when"), or the question asks for a kind it lacks. */
  fits: number;
  /** Log of 1 + its words that are neither stop words nor the question's. */
  novel: number;
  /** Log of 1 + its words. */
  length: number;
  /** It opens with a parenthesis. */
  aside: number;
  /** The sentence's first or last clause. */
  first: number;
  last: number;
  /** Share (up to 3) of names the question lacks; a "what"/"which" question and such a name. */
  names: number;
  nameForWhat: number;
  /** It holds a digit; a "how many/much" question and a digit. */
  number: number;
  numberForHowMany: number;
  /** It holds none of the question's weight. */
  none: number;
}

/** A contiguous run of a sentence's clauses, as an answer may quote it. */
export interface Piece {
  text: string;
  words: number;
  /** The chance that it holds the answer, if its sentence does (the sum of its clauses' chances). */
  chance: number;
}

/**
 * The pieces of a sentence an answer may quote: every contiguous run of its clauses, each with its
 * chance of holding the answer if the sentence does. Each clause gets a chance (a softmax over the
 * sentence's clauses of the weighted features of `ClauseWeights`: the answer is usually in the clause
 * that repeats most of the question, or next to it, and holds something new, of the kind asked for);
 * a run's chance is the sum of its clauses'. A run is a contiguous piece of the sentence (citations stay
 * exact), its closing comma, semicolon or colon dropped; a run that would leave a parenthesis open is
 * not offered (the whole sentence always is).
 */
export function piecesOf(
  sentence: string,
  question: string,
  weights: QuestionWeights,
  kind: AnswerKind | null,
  model: ClauseWeights,
): Piece[] {
  const clauses = clausesOf(sentence);
  if (clauses.length < 2) return [{ text: sentence, words: wordsOf(sentence).length, chance: 1 }];
  const asked = new Set(wordsOf(question).map(stemOf));
  const whatQuestion = kind === null;
  const howMany = /\bhow (many|much)\b/i.test(question);
  const coverages = clauses.map((clause) => weights.coverage(clause));
  const whole = weights.coverage(sentence) || 1;
  const top = coverages.indexOf(Math.max(...coverages));
  const sizes = clauses.map((clause) => wordsOf(clause).length);
  const scores = clauses.map((clause, i) => {
    const words = wordsOf(clause);
    const novel = words.filter((word) => !isStopWord(word) && !asked.has(stemOf(word))).length;
    const names = (clause.slice(1).match(/(?<=\s)\p{Lu}[\p{L}\p{M}'’-]+/gu) ?? []).filter(
      (name) => !asked.has(stemOf(name.toLowerCase())),
    ).length;
    const distance = Math.abs(i - top);
    const digit = /\d/.test(clause);
    let fits = 0;
    if (kind) fits = holdsKind(kind, clause, question) ? 1 : -1;
    return (
      model.coverage * (coverages[i] / whole) +
      (i === top ? model.top : 0) +
      (distance === 1 ? model.near1 : distance === 2 ? model.near2 : distance >= 3 ? model.far : 0) +
      (i < top ? model.before : 0) +
      model.fits * fits +
      model.novel * Math.log(1 + novel) +
      model.length * Math.log(1 + words.length) +
      (clause.startsWith('(') ? model.aside : 0) +
      (i === 0 ? model.first : 0) +
      (i === clauses.length - 1 ? model.last : 0) +
      (model.names * Math.min(names, 3)) / 3 +
      (whatQuestion && names > 0 ? model.nameForWhat : 0) +
      (digit ? model.number : 0) +
      (howMany && digit ? model.numberForHowMany : 0) +
      (coverages[i] === 0 ? model.none : 0)
    );
  });
  const highest = Math.max(...scores);
  const exps = scores.map((score) => Math.exp(score - highest));
  const sum = exps.reduce((a, b) => a + b, 0);
  const pieces: Piece[] = [];
  for (let from = 0; from < clauses.length; from++) {
    let chance = 0;
    let words = 0;
    for (let to = from; to < clauses.length; to++) {
      chance += exps[to] / sum;
      words += sizes[to];
      if (from === 0 && to === clauses.length - 1) {
        pieces.push({ text: sentence, words, chance: 1 });
        continue;
      }
      // Without its closing comma, nor (past the sentence's start) the conjunction or dash that opens it.
      const text = clauses
        .slice(from, to + 1)
        .join(' ')
        .replace(/[,;:]$/u, '')
        .replace(from > 0 ? OPENING : /$^/u, '');
      if (text !== '' && balanced(text)) pieces.push({ text, words: wordsOf(text).length, chance });
    }
  }
  return pieces;
}

/** What opens a clause and means nothing alone: "and …", "but …", "— …". */
const OPENING = /^(?:(?:and|but|or|while|whereas)\s+|[\u2013\u2014]\s*)/iu;

/** No parenthesis or bracket left open or closed without its pair. */
function balanced(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === '(' || char === '[') depth++;
    else if (char === ')' || char === ']') depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}
