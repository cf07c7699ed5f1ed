import type { AnswerKind } from './answer-kind.js';
import { holdsKind } from './answer-kind.js';
import { isStopWord, type QuestionWeights, stemOf, wordsOf } from './relevance.js';

/**
 * Words that open a clause or a phrase an answer may start or stop at: relative pronouns, conjunctions
 * that subordinate, prepositions ("in 1985", "by CBS", "at Levi's Stadium"): the answer to a question is
 * often one such phrase. Lower case only. A piece may read as a fragment ("in 1985"): the answer quotes
 * the sentence's words as they are, never rewrites them.
 */
const OPENERS =
  'which|who|whom|whose|because|although|including|despite|whereas|while|where|as well as|such as|with|by|' +
  'after|before|during|until|since|in|on|at|for|from|into|through|under|over|against|between|among';

/**
 * Where a sentence splits into clauses: after a comma, semicolon or colon followed by a space; around a
 * parenthesis or a dash set off by spaces; before an opener (see `OPENERS`). Never inside a token: "4,624",
 * "U.S.", an address or a URL has no space after its punctuation; nor between the day and the year of a
 * date ("February 7, 2016").
 */
const CLAUSE_BREAK = new RegExp(
  String.raw`(?<=(?<!\d),|(?<=\d),(?!\s+\d)|[;:])\s+|\s+(?=[(\u2013\u2014])|(?<=\))\s+|\s+(?=(?:${OPENERS})\s)`,
  'u',
);

/**
 * The clauses of a sentence, and the phrases its openers start (see `CLAUSE_BREAK`): a dash or an opener
 * starts the clause it opens. Joined back with single spaces, they are the sentence (its white space single).
 */
export function clausesOf(sentence: string): string[] {
  return sentence.split(CLAUSE_BREAK).filter((clause) => clause !== '');
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
  /** Its share of the whole question's weight (not only of its sentence's). */
  share: number;
  /** Log of 1 + its new words (as `novel`), when it is the clause holding the most of the question's weight. */
  topNovel: number;
  /** It holds some of the question's weight and some new words; some of the weight and no new word. */
  mixed: number;
  echo: number;
  /** The question's weight the clause before it and the clause after it hold, as a share of the top clause's. */
  previous: number;
  next: number;
  /** It holds some of the question's weight and a name the question lacks. */
  weightAndName: number;
  /** The question's focus ("which *venue*", "what *year*") is among its words. */
  focus: number;
  /** A "where" question and a place ("in Boston", "at the Louvre"); a "why" question and a reason ("because"). */
  place: number;
  reason: number;
  /**
   * The question asks for its subject ("Who won…?", "Which team won…?"): the clause is before, or after,
   * the one holding the most of the question's weight.
   */
  subjectBefore: number;
  subjectAfter: number;
  /** It holds the preposition the question asks with ("*in* what year", "*by* whom"). */
  preposition: number;
}

/** A question asking for its subject: "Who won…?", "Which team won…?" (not "Who did…", "What is…"). */
const ASKS_SUBJECT =
  /^\s*(who|what|which(\s+\w+)?)\s+(?!(did|does|do|is|was|are|were|has|have|had|can|could|will|would)\b)\w+/i;
/** Words after "what" or "which" that are no focus ("What is…", "What kind of…"). */
const NO_FOCUS = new Set('is was are were do does did has had have be the a an kind type sort of'.split(' '));

/** The stem of what a "what"/"which" question asks about ("Which *venue*…" → "venu"), or null. */
function focusOf(question: string): string | null {
  const word = /\b(?:what|which)\s+(?:kind of |type of |sort of )?([a-z]+)/i.exec(question)?.[1].toLowerCase();
  return word === undefined || NO_FOCUS.has(word) || isStopWord(word) ? null : stemOf(word);
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
 * that repeats most of the question, or next to it, or in the phrase after the one that does, and holds
 * something new, of the kind asked for); a run's chance is the sum of its clauses'. A run is a
 * contiguous piece of the sentence (citations stay exact), its closing comma, semicolon or colon
 * dropped; a run that would leave a parenthesis or a quotation open is not offered, nor one longer than
 * `maxWords` (the whole sentence always is).
 */
export function piecesOf(
  sentence: string,
  question: string,
  weights: QuestionWeights,
  kind: AnswerKind | null,
  model: ClauseWeights,
  maxWords = Infinity,
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
  const topCoverage = coverages[top] || 1;
  const focus = focusOf(question);
  const asksPlace = /^\s*where\b|\bwhere (is|was|are|were|did|does|do)\b/i.test(question);
  const asksReason = /\bwhy\b/i.test(question);
  const asksSubject = ASKS_SUBJECT.test(question);
  const asksWith = /\b(in|at|on|by|for|from|to|with|during|of)\s+(what|which|whom|how)\b/i.exec(question)?.[1];
  const preposition = asksWith ? new RegExp(`\\b${asksWith}\\b`, 'i') : null;
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
      (coverages[i] === 0 ? model.none : 0) +
      model.share * coverages[i] +
      (i === top ? model.topNovel * Math.log(1 + novel) : 0) +
      (coverages[i] > 0 ? (novel > 0 ? model.mixed : model.echo) : 0) +
      (i > 0 ? (model.previous * coverages[i - 1]) / topCoverage : 0) +
      (i < clauses.length - 1 ? (model.next * coverages[i + 1]) / topCoverage : 0) +
      (coverages[i] > 0 && names > 0 ? model.weightAndName : 0) +
      (focus !== null && (clause.toLowerCase().match(/\p{L}+/gu) ?? []).some((word) => stemOf(word) === focus)
        ? model.focus
        : 0) +
      (asksPlace && /\b(in|at|near|on|from)\s+(the\s+)?\p{Lu}/u.test(clause) ? model.place : 0) +
      (asksReason && /\b(because|due to|since|so that|in order|as a result|so as)\b/i.test(clause) ? model.reason : 0) +
      (asksSubject && i < top ? model.subjectBefore : 0) +
      (asksSubject && i > top ? model.subjectAfter : 0) +
      (preposition?.test(clause) ? model.preposition : 0)
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
      // A long sentence has many runs; those past the answer's length are never quoted (the whole is offered).
      if (words > maxWords) continue;
      // Without its closing comma, nor (past the sentence's start) the conjunction or dash that opens it.
      const run = clauses
        .slice(from, to + 1)
        .join(' ')
        .replace(/[,;:]$/u, '');
      const opening = from > 0 ? OPENING.exec(run)?.[0] : undefined;
      const text = opening ? run.slice(opening.length) : run;
      // Its words are its clauses' (a break is always at white space), less the conjunction dropped.
      const count = opening && /\p{L}/u.test(opening) ? words - 1 : words;
      if (text !== '' && balanced(text)) pieces.push({ text, words: count, chance });
    }
  }
  return pieces;
}

/** What opens a clause and means nothing alone: "and …", "but …", "— …". */
const OPENING = /^(?:(?:and|but|or|while|whereas)\s+|[\u2013\u2014]\s*)/iu;

/** No parenthesis, bracket or quotation left open or closed without its pair ("the \u201cGolden" is not offered). */
function balanced(text: string): boolean {
  let depth = 0;
  let quotes = 0;
  let straight = 0;
  for (const char of text) {
    if (char === '(' || char === '[') depth++;
    else if (char === ')' || char === ']') depth--;
    else if (char === '\u201c') quotes++;
    else if (char === '\u201d') quotes--;
    else if (char === '"') straight++;
    if (depth < 0 || quotes < 0) return false;
  }
  return depth === 0 && quotes === 0 && straight % 2 === 0;
}
