import type { AnswerInput, Answerer } from './answerer.js';
import { NOTHING_FOUND } from './answerer.js';

const MAX_SENTENCES = 3;
const MAX_PER_PASSAGE = 2;
const PASSAGES_CONSIDERED = 3;
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from has have how i in is it its of on or that the this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

/** Crude stems: lower-cased words of 3+ letters cut to 6 characters, enough to match "rotate"/"rotation". */
function stems(text: string): Set<string> {
  const words = text.toLowerCase().match(/\p{L}[\p{L}\p{N}]{2,}/gu) ?? [];
  return new Set(words.filter((word) => !STOP_WORDS.has(word)).map((word) => word.slice(0, 6)));
}

function sentencesOf(text: string): string[] {
  return (text.replace(/\s+/g, ' ').match(/[^.!?]+(?:[.!?]+|$)/g) ?? [])
    .map((s) => s.trim())
    .filter((s) => s.length > 20);
}

/**
 * The default answerer, no model needed: the sentences of the best passages that share the most words
 * with the question, each cited by its source's number.
 */
export class ExtractiveAnswerer implements Answerer {
  async *answer({ question, passages }: AnswerInput): AsyncIterable<string> {
    const wanted = stems(question);
    const picked: { text: string; citation: number; score: number; order: number }[] = [];
    passages.slice(0, PASSAGES_CONSIDERED).forEach((passage, index) => {
      const scored = sentencesOf(passage.content)
        .map((text, order) => {
          const found = stems(text);
          let overlap = 0;
          for (const stem of wanted) if (found.has(stem)) overlap++;
          // Earlier passages rank higher when overlap ties.
          return { text, citation: index + 1, score: overlap - index * 0.1, order };
        })
        .filter((sentence) => sentence.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, MAX_PER_PASSAGE);
      picked.push(...scored);
    });
    const best = picked.sort((a, b) => b.score - a.score).slice(0, MAX_SENTENCES);
    if (best.length === 0 && passages.length > 0) {
      const lead = sentencesOf(passages[0].content)[0] ?? passages[0].snippet;
      best.push({ text: lead, citation: 1, score: 0, order: 0 });
    }
    if (best.length === 0) {
      yield NOTHING_FOUND;
      return;
    }
    // Keep the reading order of each passage so the answer flows.
    best.sort((a, b) => a.citation - b.citation || a.order - b.order);
    for (const [position, sentence] of best.entries()) {
      yield `${position === 0 ? '' : ' '}${sentence.text} [${sentence.citation}]`;
    }
  }
}
