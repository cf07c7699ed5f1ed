/**
 * The extractive answerer as it was before issue 21 (src/query/answerers/extractive.answerer.ts at
 * 54c984f), kept here so that `npm run bench -- answers` measures the old answers and the new on the
 * same sources in the same run. It reads only the question and the passages, so it runs on the
 * passages the service returned (`content.slice(start, end)`). Not used by the service.
 */
const MAX_SENTENCES = 3;
const MAX_PER_PASSAGE = 2;
const PASSAGES_CONSIDERED = 3;
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from has have how i in is it its of on or that the this to was what when where which who why will with you your'.split(
    ' ',
  ),
);
const NOTHING_FOUND = 'I could not find anything in the knowledge base that answers this question.';

function stems(text) {
  const words = text.toLowerCase().match(/\p{L}[\p{L}\p{N}]{2,}/gu) ?? [];
  return new Set(words.filter((word) => !STOP_WORDS.has(word)).map((word) => word.slice(0, 6)));
}

function sentencesOf(text) {
  return (text.replace(/\s+/g, ' ').match(/[^.!?]+(?:[.!?]+|$)/g) ?? [])
    .map((s) => s.trim())
    .filter((s) => s.length > 20);
}

/** `passages`: `[{content, snippet}]`, best first. Returns the whole answer. */
export function legacyAnswer(question, passages) {
  const wanted = stems(question);
  const picked = [];
  passages.slice(0, PASSAGES_CONSIDERED).forEach((passage, index) => {
    const scored = sentencesOf(passage.content)
      .map((text, order) => {
        const found = stems(text);
        let overlap = 0;
        for (const stem of wanted) if (found.has(stem)) overlap++;
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
  if (best.length === 0) return NOTHING_FOUND;
  best.sort((a, b) => a.citation - b.citation || a.order - b.order);
  return best.map((sentence) => `${sentence.text} [${sentence.citation}]`).join(' ');
}
