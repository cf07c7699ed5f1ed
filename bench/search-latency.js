/**
 * Latency of the retriever's search alone over a generated corpus of 10,000 documents (about 50,000
 * chunks) in one PostgreSQL domain. The corpus is loaded through DocumentsService.createMany, the same
 * chunking and indexing code path as the API (in batches, to keep the set-up short), then VACUUM
 * ANALYZE runs as autovacuum would after a bulk load. Queries are timed one at a time, top 10.
 *
 * Standalone:  flock /tmp/bench.lock node bench/search-latency.js [--documents=10000] [--queries=300] [--no-build]
 *   builds dist/, creates a throwaway database (bench/lib/database.js), boots the application in this
 *   process (no HTTP: the figure is the search itself), prints p50/p95/p99, drops the database.
 * As a section:  import { run } from './search-latency.js'; await run({ databaseUrl })  (an empty database).
 *
 * The text is synthetic but shaped like prose: 40% stop words, content words drawn from a Zipf
 * distribution over 40,000 invented words, and a handful of topic words per document. Two kinds of
 * query: "keywords" (2 to 4 content words of one document, one of them a topic word) and "sentence"
 * (a 4- to 9-word window of one of its sentences, mostly common words: the hard case for OR search).
 */
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const description = 'BM25 search latency over 10,000 generated documents (~50,000 chunks)';

const STOP_WORDS = [
  'the',
  'of',
  'and',
  'a',
  'to',
  'in',
  'is',
  'that',
  'for',
  'it',
  'as',
  'with',
  'was',
  'on',
  'by',
  'are',
  'this',
  'be',
  'from',
  'at',
  'or',
  'which',
  'an',
  'were',
  'have',
];
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vo',
  'zi',
  'pe',
  'shu',
  'gra',
  'tel',
  'mon',
  'dar',
  'fin',
  'bel',
  'cor',
  'pax',
  'rin',
  'sol',
  'bri',
  'dem',
  'gul',
  'hap',
];

/** mulberry32: a small deterministic generator, so every run sees the same corpus and queries. */
export function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeCorpus({ documents, seed = 20261121 }) {
  const random = generator(seed);
  const int = (n) => Math.floor(random() * n);
  const vocabulary = [];
  const seen = new Set();
  while (vocabulary.length < 40_000) {
    let word = '';
    for (let i = 2 + int(3); i > 0; i--) word += SYLLABLES[int(SYLLABLES.length)];
    if (!seen.has(word)) {
      vocabulary.push(word);
      seen.add(word);
    }
  }
  const cumulative = [];
  let total = 0;
  for (let rank = 1; rank <= vocabulary.length; rank++) cumulative.push((total += 1 / rank));
  const zipf = () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo];
  };

  const docs = [];
  for (let d = 0; d < documents; d++) {
    const topics = Array.from({ length: 5 }, () => vocabulary[2000 + int(vocabulary.length - 2000)]);
    const word = () =>
      random() < 0.4 ? STOP_WORDS[int(STOP_WORDS.length)] : random() < 0.08 ? topics[int(topics.length)] : zipf();
    const sentences = [];
    const paragraphs = [];
    let words = 0;
    const length = 1050 + int(350);
    while (words < length) {
      const paragraph = [];
      for (let s = 4 + int(5); s > 0; s--) {
        const tokens = Array.from({ length: 8 + int(15) }, word);
        words += tokens.length;
        sentences.push(tokens);
        paragraph.push(`${tokens.join(' ').replace(/^./, (c) => c.toUpperCase())}.`);
      }
      paragraphs.push(paragraph.join(' '));
    }
    const title = Array.from({ length: 3 + int(4) }, () => (random() < 0.5 ? topics[int(topics.length)] : zipf())).join(
      ' ',
    );
    docs.push({ title, content: paragraphs.join('\n\n'), topics, sentences });
  }

  const queries = (count) =>
    Array.from({ length: count }, (_, i) => {
      const doc = docs[int(docs.length)];
      if (i % 2 === 0) {
        const content = doc.sentences.flat().filter((token) => !STOP_WORDS.includes(token));
        const words = [
          doc.topics[int(doc.topics.length)],
          ...Array.from({ length: 1 + int(3) }, () => content[int(content.length)]),
        ];
        return { kind: 'keywords', text: words.join(' ') };
      }
      const sentence = doc.sentences[int(doc.sentences.length)];
      const size = Math.min(sentence.length, 4 + int(6));
      const start = int(sentence.length - size + 1);
      return { kind: 'sentence', text: sentence.slice(start, start + size).join(' ') };
    });
  return { docs, queries };
}

/** Metadata of the d-th document: a category of ten and a year of 26, so filters keep 4 % to 30 % of the corpus. */
function metadataOf(d) {
  return { n: d, category: `c${d % 10}`, year: 2000 + ((d * 7) % 26) };
}

/** The filters timed against the same queries unfiltered: equality, a range, and a list with a range. */
const FILTERS = [
  { category: 'c3' },
  { year: { $gte: 2018 } },
  { category: { $in: ['c1', 'c2', 'c5'] }, year: { $lt: 2010 } },
];

export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const round = (value) => Math.round(value * 100) / 100;
  return {
    count: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
  };
}

export async function run({
  databaseUrl,
  documents = 10_000,
  queryCount = 300,
  log = (m) => console.log(`[search-latency] ${m}`),
}) {
  const { createApp } = await import('../dist/app.js');
  const { loadConfig } = await import('../dist/config/env.schema.js');
  const { DocumentsService } = await import('../dist/documents/documents.service.js');
  const { DomainsService } = await import('../dist/domains/domains.service.js');
  const { RETRIEVER } = await import('../dist/retrieval/retriever.js');
  const { DataSource } = await import('typeorm');

  const app = await createApp(
    loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: 'search-latency-bench-secret-0123456789abcdef',
      LOG_LEVEL: 'warn',
    }),
    {
      logger: ['error', 'warn'],
    },
  );
  try {
    const domains = app.get(DomainsService);
    const slug = 'latency-bench';
    if (await domains.findBySlug(slug)) await domains.remove(slug);
    await domains.create({ name: 'Latency bench', slug });
    const domain = await domains.findBySlug(slug);

    const { docs, queries } = makeCorpus({ documents });
    const service = app.get(DocumentsService);
    const loadStarted = performance.now();
    let bytes = 0;
    for (let i = 0; i < docs.length; i += 100) {
      const batch = docs.slice(i, i + 100).map((doc, j) => {
        bytes += Buffer.byteLength(doc.content) + Buffer.byteLength(doc.title);
        return {
          title: doc.title,
          content: doc.content,
          metadata: metadataOf(i + j),
          contentType: 'text/plain',
          sizeBytes: Buffer.byteLength(doc.content),
        };
      });
      await service.createMany({ domainId: domain.id }, batch);
      if ((i / 100) % 20 === 19) log(`loaded ${i + 100} documents`);
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const dataSource = app.get(DataSource);
    await dataSource.query('VACUUM ANALYZE document_chunks');
    await dataSource.query('VACUUM ANALYZE term_stats');
    await dataSource.query('VACUUM ANALYZE documents');
    const [{ chunks }] = await dataSource.query(
      'SELECT count(*)::int AS chunks FROM document_chunks WHERE scope_id = $1',
      [domain.id],
    );
    log(
      `${docs.length} documents, ${chunks} chunks, ${(bytes / 1e6).toFixed(1)} MB loaded in ${loadSeconds.toFixed(1)} s (${(bytes / 1e6 / loadSeconds).toFixed(2)} MB/s in-process)`,
    );

    const retriever = app.get(RETRIEVER);
    const all = queries(queryCount + 30);
    for (const query of all.slice(0, 30)) await retriever.search(query.text, { domainId: domain.id }, { limit: 10 });
    const timings = { keywords: [], sentence: [], filtered: [], unfilteredPaired: [] };
    const timed = async (query, filter) => {
      const started = performance.now();
      const results = await retriever.search(query.text, { domainId: domain.id }, { limit: 10, filter });
      return { ms: performance.now() - started, results };
    };
    let empty = 0;
    let shortFiltered = 0;
    for (const [i, query] of all.slice(30).entries()) {
      // Each query runs unfiltered and filtered back to back, in alternating order, so both see the same load.
      const filter = FILTERS[i % FILTERS.length];
      const plain = i % 2 === 0 ? await timed(query) : undefined;
      const narrowed = await timed(query, filter);
      const unfiltered = plain ?? (await timed(query));
      timings[query.kind].push(unfiltered.ms);
      timings.unfilteredPaired.push(unfiltered.ms);
      timings.filtered.push(narrowed.ms);
      if (unfiltered.results.length === 0) empty++;
      if (narrowed.results.length < 10) shortFiltered++;
    }
    const figures = {
      documents: docs.length,
      chunks,
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      latencyMs: summarize([...timings.keywords, ...timings.sentence]),
      keywordsMs: summarize(timings.keywords),
      sentenceMs: summarize(timings.sentence),
      emptyResults: empty,
      target: { p50: 20, p95: 50 },
      filteredMs: summarize(timings.filtered),
      filteredOverUnfilteredP95:
        Math.round((summarize(timings.filtered).p95 / summarize(timings.unfilteredPaired).p95) * 100) / 100,
      filteredShortOfTopK: shortFiltered,
      filters: FILTERS,
    };
    log(
      `search, top 10, ${figures.latencyMs.count} queries one at a time: p50 ${figures.latencyMs.p50} ms, p95 ${figures.latencyMs.p95} ms, p99 ${figures.latencyMs.p99} ms (target p50 < 20, p95 < 50)`,
    );
    log(
      `  keyword queries p50 ${figures.keywordsMs.p50} / p95 ${figures.keywordsMs.p95} ms; sentence queries p50 ${figures.sentenceMs.p50} / p95 ${figures.sentenceMs.p95} ms`,
    );
    log(
      `filtered search (same queries, ${FILTERS.length} filters in turn): p50 ${figures.filteredMs.p50} ms, p95 ${figures.filteredMs.p95} ms = ${figures.filteredOverUnfilteredP95} × unfiltered p95 (target ≤ 1.5); ${shortFiltered} returned fewer than 10`,
    );
    return figures;
  } finally {
    await app.close();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) =>
    Number(args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  if (!args.includes('--no-build'))
    execSync('npx tsc -p tsconfig.build.json', {
      stdio: 'inherit',
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
  const { createBenchDatabase } = await import('./lib/database.js');
  const database = await createBenchDatabase();
  try {
    const figures = await run({
      databaseUrl: database.url,
      documents: option('documents', 10_000),
      queryCount: option('queries', 300),
    });
    console.log(JSON.stringify(figures, null, 2));
  } finally {
    await database.drop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
