/**
 * One big tenant (issue 24): the retriever's rounds as they were before the approximations past
 * `commonPostingBudget` ("today": the budget set to Infinity) and as they are now ("at scale": the
 * defaults), on two kept search-growth databases (the ~50k- and the ~1M-chunk corpus), in one run:
 * the same queries, one at a time, top 10, after 30 warm-up queries, alternating variant and size,
 * BENCH_COMPARE_ROUNDS times. Prints each p50/p95/p99 (and p95 per query kind), p95(1M)/p95(50k) per
 * variant and round, and how much of today's top 10 the at-scale rounds keep.
 *
 * The databases are search-growth's, kept (run.js logs their names):
 *   BENCH_KEEP_DATABASE=1 BENCH_GROWTH_LOAD=sql BENCH_GROWTH_DOCS=10000 npm run bench -- search-growth          (50k)
 *   BENCH_KEEP_DATABASE=1 BENCH_GROWTH_LOAD=sql BENCH_GROWTH_DOCS=10000,200000 npm run bench -- search-growth   (1M)
 * Run:  flock /tmp/bench.lock node bench/growth-compare.js <url of the 50k database> <url of the 1M database>
 * (builds nothing: run `npm run build` first). The queries are search-growth's (its corpus, seeded, with
 * BENCH_GROWTH_QUERIES + 30 queries from the first 10,000 documents).
 */
import { fileURLToPath } from 'node:url';
import { growthCorpus, loadSciFactWords } from './lib/growth-corpus.js';
import { summarize } from './search-latency.js';

const WARM_UP = 30;
const QUERY_DOCUMENTS = 10_000;

async function main() {
  const urls = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
  if (urls.length !== 2) throw new Error('usage: node bench/growth-compare.js <50k database url> <1M database url>');
  const rounds = Number(process.env.BENCH_COMPARE_ROUNDS ?? 2);
  const queryCount = Number(process.env.BENCH_GROWTH_QUERIES ?? 300);
  const corpus = growthCorpus({
    queryCount: queryCount + WARM_UP,
    queryDocuments: QUERY_DOCUMENTS,
    words: loadSciFactWords(),
  });
  for (let i = 0; i < QUERY_DOCUMENTS; i++) corpus.next();
  const queries = corpus.queries;

  const { createApp } = await import('../dist/app.js');
  const { loadConfig } = await import('../dist/config/env.schema.js');
  const { RETRIEVER } = await import('../dist/retrieval/retriever.js');
  const { DEFAULT_BM25_PARAMS } = await import('../dist/retrieval/bm25.retriever.js');
  const { DataSource } = await import('typeorm');
  const variants = {
    today: { ...DEFAULT_BM25_PARAMS, commonPostingBudget: Infinity },
    'at scale': DEFAULT_BM25_PARAMS,
  };

  const sizes = [];
  for (const url of urls) {
    const app = await createApp(
      loadConfig({
        NODE_ENV: 'production',
        DATABASE_URL: url,
        JWT_SECRET: 'growth-compare-secret-0123456789abcdef0123',
        LOG_LEVEL: 'error',
      }),
      { logger: ['error'] },
    );
    const dataSource = app.get(DataSource);
    const [{ id, chunks }] = await dataSource.query(
      `SELECT d.id, s.chunk_count::int AS chunks FROM domains d JOIN corpus_stats s ON s.scope_id = d.id WHERE d.slug = 'growth-bench'`,
    );
    sizes.push({ app, chunks, retriever: app.get(RETRIEVER), corpus: { domainId: id } });
  }
  try {
    const tops = new Map();
    for (let round = 1; round <= rounds; round++) {
      const p95 = {};
      for (const [variant, params] of Object.entries(variants)) {
        for (const size of sizes) {
          size.retriever.params = params;
          for (const query of queries.slice(0, WARM_UP))
            await size.retriever.search(query.text, size.corpus, { limit: 10 });
          const byKind = { keywords: [], sentence: [], claim: [] };
          const ranked = [];
          for (const query of queries.slice(WARM_UP)) {
            const started = performance.now();
            const results = await size.retriever.search(query.text, size.corpus, { limit: 10 });
            byKind[query.kind].push(performance.now() - started);
            ranked.push(results.map((r) => r.documentId));
          }
          const all = summarize(Object.values(byKind).flat());
          (p95[variant] ??= []).push(all.p95);
          tops.set(`${variant} ${size.chunks}`, ranked);
          console.log(
            `round ${round} ${variant.padEnd(8)} ${String(size.chunks).padStart(9)} chunks: p50 ${all.p50} p95 ${all.p95} p99 ${all.p99} ms | p95 keywords ${summarize(byKind.keywords).p95}, sentence ${summarize(byKind.sentence).p95}, claim ${summarize(byKind.claim).p95}`,
          );
        }
      }
      for (const [variant, [small, large]] of Object.entries(p95))
        console.log(
          `round ${round} ${variant}: p95 at ${sizes[1].chunks} / p95 at ${sizes[0].chunks} = ${(large / small).toFixed(2)}`,
        );
    }
    for (const size of sizes) {
      const today = tops.get(`today ${size.chunks}`);
      const scaled = tops.get(`at scale ${size.chunks}`);
      const kept = {};
      let identical = 0;
      scaled.forEach((ids, i) => {
        const known = new Set(today[i]);
        const entry = (kept[queries[WARM_UP + i].kind] ??= [0, 0]);
        entry[0] += ids.filter((id) => known.has(id)).length;
        entry[1] += today[i].length;
        if (JSON.stringify(ids) === JSON.stringify(today[i])) identical++;
      });
      const share = ([hit, all]) => `${((hit / Math.max(1, all)) * 100).toFixed(1)} %`;
      const total = Object.values(kept).reduce(([h, a], [hit, all]) => [h + hit, a + all], [0, 0]);
      console.log(
        `${size.chunks} chunks: the at-scale top 10 keeps ${share(total)} of today's (${Object.entries(kept)
          .map(([kind, entry]) => `${kind} ${share(entry)}`)
          .join(', ')}); identical lists ${identical} of ${today.length}`,
      );
    }
  } finally {
    for (const size of sizes) await size.app.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
