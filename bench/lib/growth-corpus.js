/**
 * A corpus of any size with SciFact's words (bench/search-growth.js), generated one document at a
 * time so 200,000 documents never sit in memory together.
 *
 * Body words are drawn from SciFact's own token stream (title + abstract of its 5,183 documents):
 * picking a random token of that stream reproduces its word frequencies, stop words and Zipf tail
 * included. 8 % of a document's words are its five topic words (bursty, as real topics are); a topic
 * word is a SciFact word outside the 300 most frequent, or, for one in three, a variant of one (the
 * word plus a suffix, e.g. "kinaseol"), so the vocabulary keeps growing with the corpus as real
 * vocabularies do (Heaps' law) instead of every rare word turning common at 1M chunks. Length and
 * layout as bench/search-latency.js (1,050 to 1,400 words in paragraphs of 4 to 8 sentences), which
 * the chunker cuts into about 5 chunks.
 *
 * Deterministic (seeded): the first N documents are the same whatever the total, so a run can load
 * 10,000 documents, measure, load 190,000 more and measure again with the same queries.
 *
 * Queries are taken from the first `queryDocuments` documents, three kinds in turn: "keywords" (a topic
 * word and 1 to 3 other content words of one document), "sentence" (a 4- to 9-word window of one of
 * its sentences, mostly common words: the hard case for OR search) and "claim" (a SciFact training
 * claim: a real question in the same vocabulary).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generator } from '../search-latency.js';

const DATA_DIR = process.env.SCIFACT_DIR ?? fileURLToPath(new URL('../../../shared/data/scifact/', import.meta.url));
export const SUFFIXES = ['ase', 'ol', 'in', 'ide', 'one', 'gen', 'yl', 'ite', 'ar', 'osis'];
const COMMON_RANKS = 300;

function jsonLines(file) {
  return readFileSync(`${DATA_DIR}/${file}`, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** SciFact's token stream as indices into its vocabulary (most frequent first), and the claims. */
export function loadSciFactWords() {
  const index = new Map();
  const words = [];
  const counts = [];
  const stream = [];
  for (const doc of jsonLines('corpus.jsonl')) {
    for (const word of `${doc.title} ${doc.text}`.toLowerCase().match(/[a-z][a-z0-9]*(?:-[a-z0-9]+)*/g) ?? []) {
      let id = index.get(word);
      if (id === undefined) {
        id = words.push(word) - 1;
        index.set(word, id);
        counts.push(0);
      }
      counts[id]++;
      stream.push(id);
    }
  }
  const byRank = words.map((_, id) => id).sort((a, b) => counts[b] - counts[a]);
  const rankOf = new Int32Array(words.length);
  byRank.forEach((id, rank) => (rankOf[id] = rank));
  return {
    vocabulary: byRank.map((id) => words[id]),
    stream: Int32Array.from(stream, (id) => rankOf[id]),
    claims: jsonLines('queries-train.jsonl').map((query) => query.text),
  };
}

/**
 * `next()` returns the next document `{title, content}`; `queries` fills up, in order, while the first
 * `queryDocuments` documents are generated (`queryCount` of them, all ready once those are).
 */
export function growthCorpus({ queryCount, queryDocuments, seed = 20261123, words = loadSciFactWords() }) {
  const { vocabulary, stream, claims } = words;
  const common = new Set(vocabulary.slice(0, COMMON_RANKS));
  const random = generator(seed);
  const int = (n) => Math.floor(random() * n);
  // A separate generator for the queries, so their number never changes the documents.
  const pickRandom = generator(seed ^ 0x5bd1e995);
  const pick = (n) => Math.floor(pickRandom() * n);

  const wanted = new Map();
  for (let i = 0; i < queryCount; i++) {
    const doc = pick(queryDocuments);
    wanted.set(doc, [...(wanted.get(doc) ?? []), i]);
  }
  const queries = new Array(queryCount);
  let produced = 0;

  const topicWord = () => {
    const word = vocabulary[COMMON_RANKS + int(vocabulary.length - COMMON_RANKS)];
    return random() < 1 / 3 ? `${word}${SUFFIXES[int(SUFFIXES.length)]}` : word;
  };

  function next() {
    const number = produced++;
    const topics = Array.from({ length: 5 }, topicWord);
    const word = () => (random() < 0.08 ? topics[int(topics.length)] : vocabulary[stream[int(stream.length)]]);
    const sentences = [];
    const paragraphs = [];
    let count = 0;
    const length = 1050 + int(350);
    while (count < length) {
      const paragraph = [];
      for (let s = 4 + int(5); s > 0; s--) {
        const tokens = Array.from({ length: 8 + int(15) }, word);
        count += tokens.length;
        sentences.push(tokens);
        paragraph.push(`${tokens.join(' ').replace(/^./, (c) => c.toUpperCase())}.`);
      }
      paragraphs.push(paragraph.join(' '));
    }
    const title = Array.from({ length: 3 + int(4) }, () =>
      random() < 0.5 ? topics[int(topics.length)] : vocabulary[stream[int(stream.length)]],
    ).join(' ');
    for (const slot of wanted.get(number) ?? []) queries[slot] = queryOf(slot, topics, sentences);
    return { title, content: paragraphs.join('\n\n') };
  }

  function queryOf(slot, topics, sentences) {
    const kind = ['keywords', 'sentence', 'claim'][slot % 3];
    if (kind === 'claim') return { kind, text: claims[pick(claims.length)] };
    if (kind === 'keywords') {
      const content = sentences.flat().filter((token) => !common.has(token));
      return {
        kind,
        text: [
          topics[pick(topics.length)],
          ...Array.from({ length: 1 + pick(3) }, () => content[pick(content.length)]),
        ].join(' '),
      };
    }
    const sentence = sentences[pick(sentences.length)];
    const size = Math.min(sentence.length, 4 + pick(6));
    const start = pick(sentence.length - size + 1);
    return { kind, text: sentence.slice(start, start + size).join(' ') };
  }

  return { next, queries, generated: () => produced };
}
