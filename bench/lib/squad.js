/**
 * SQuAD v1.1's scoring (the official evaluate-v1.1.py): answers and gold strings lower-cased, without
 * punctuation, without the articles a/an/the, white space collapsed. An answer "hits" when it contains
 * a normalized gold string; token F1 is against the best gold string. Citation markers ("[2]") are
 * taken out of an answer before it is scored.
 */
export function normalizeAnswer(text) {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

export function withoutCitations(answer) {
  return answer.replace(/\s*\[\d+\]/g, '').trim();
}

/** The answer's first sentence: up to its first citation marker (every sentence ends with one). */
export function firstSentence(answer) {
  const marker = /\s*\[\d+\]/.exec(answer);
  return marker ? answer.slice(0, marker.index) : answer;
}

export function hits(text, golds) {
  const normalized = normalizeAnswer(text);
  return golds.some((gold) => {
    const g = normalizeAnswer(gold);
    return g !== '' && normalized.includes(g);
  });
}

export function tokenF1(text, golds) {
  const predicted = normalizeAnswer(text).split(' ').filter(Boolean);
  let best = 0;
  for (const gold of golds) {
    const truth = normalizeAnswer(gold).split(' ').filter(Boolean);
    const counts = new Map();
    for (const token of truth) counts.set(token, (counts.get(token) ?? 0) + 1);
    let common = 0;
    for (const token of predicted) {
      const left = counts.get(token) ?? 0;
      if (left > 0) {
        common++;
        counts.set(token, left - 1);
      }
    }
    if (common === 0) continue;
    const precision = common / predicted.length;
    const recall = common / truth.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}

export function wordCount(text) {
  return text.split(/\s+/).filter(Boolean).length;
}
