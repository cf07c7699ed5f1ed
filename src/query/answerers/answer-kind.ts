import { wordsOf } from './relevance.js';

/** What a question asks for, when its first words say so: a time, a quantity or a person. */
export type AnswerKind = 'time' | 'quantity' | 'person';

const MONTHS = 'january february march april may june july august september october november december';
const TIME = new RegExp(`\\b(\\d{3,4}s?|${MONTHS.split(' ').join('|')}|century|centuries|decade|years?|ago)\\b`, 'i');
const QUANTITY =
  /\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|half|percent)\b/i;

export function askedKind(question: string): AnswerKind | null {
  const q = question.toLowerCase();
  if (/\b(when|what year|which year|what century|what decade|what date|what month|what day|how long ago)\b/.test(q))
    return 'time';
  if (
    /\bhow (many|much|long|far|old|large|big|tall|high|fast)\b|\bwhat (percentage|percent|number|amount|size)\b/.test(q)
  )
    return 'quantity';
  if (/^\s*(who|whom|whose)\b|\b(who|whom) (is|was|were|did|does|had|has)\b/.test(q)) return 'person';
  return null;
}

/** True when `sentence` holds something of the kind asked for (for a person: a name the question lacks). */
export function holdsKind(kind: AnswerKind, sentence: string, question: string): boolean {
  if (kind === 'time') return TIME.test(sentence);
  if (kind === 'quantity') return QUANTITY.test(sentence);
  const asked = new Set(wordsOf(question));
  const names = sentence.slice(1).match(/(?<=\s)\p{Lu}[\p{L}\p{M}'’-]+/gu) ?? [];
  return names.some((name) => !asked.has(name.toLowerCase()));
}
