/**
 * How search cost grows with the corpus (issue 9): the retriever's search p50/p95 at each size of one
 * growing corpus, in one run, and what the index costs on disk and in memory. Target: p95 at the last
 * size (1M chunks) at most 3 x p95 at the first (50k chunks).
 *
 * The corpus is bench/lib/growth-corpus.js (SciFact's word frequencies, topic words, a vocabulary
 * that grows with the corpus; ~5 chunks per document), loaded in one public domain through
 * DocumentsService.createMany (the API's chunking and indexing path) in batches of 100,
 * BENCH_GROWTH_LOAD_CONCURRENCY batches at a time (default 2). The sizes are cumulative document
 * counts: the corpus is loaded up to the first, VACUUM ANALYZEd, measured, then grown to the next, and
 * so on. The same queries at every size, all taken from the first size's documents, one at a time,
 * top 10, after 30 warm-up queries (the application runs in this process, no HTTP, as in
 * search-latency.js).
 *
 * At each size: chunks; on disk pg_relation_size of document_chunks (heap), its TOAST, its GIN index
 * document_chunks_search_idx, pg_indexes_size, and the total with documents and term_stats; in memory
 * shared_buffers, how much of the chunk table and of the GIN index sit in them after the queries
 * (pg_buffercache, when the extension can be created), and the buffers each query touches
 * (pg_statio deltas over the measured queries: hits, and reads that missed shared buffers).
 *
 * Env (also read by the `search-growth` section of bench/run.js):
 *   BENCH_GROWTH_DOCS               cumulative sizes in documents, default "10000,200000" (~50k and ~1M chunks)
 *   BENCH_GROWTH_QUERIES            measured queries per size, default 300
 *   BENCH_GROWTH_LOAD_CONCURRENCY   createMany batches in flight while loading, default 2
 *   BENCH_GROWTH_LOAD               "api" (default: DocumentsService.createMany) or "sql" (bench/lib/sql-load.js:
 *                                   the same rows straight into the same tables, vectors checked on a sample)
 * Small check:  BENCH_GROWTH_DOCS=400,4000 BENCH_GROWTH_QUERIES=60 flock /tmp/bench.lock node bench/search-growth.js
 * Standalone:   flock /tmp/bench.lock node bench/search-growth.js [--no-build]   (builds, throwaway database, drops it)
 */
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { growthCorpus, loadSciFactWords, SUFFIXES } from './lib/growth-corpus.js';
import { insertDocuments, LexemeTable, newStats, verifySample, writeStats } from './lib/sql-load.js';
import { summarize } from './search-latency.js';

export const description =
  'search p50/p95 at 50k and 1M chunks of one growing corpus (BENCH_GROWTH_DOCS), index size on disk and in memory';

const BATCH = 100;
const WARM_UP = 30;
const P95_GROWTH_TARGET = 3;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function growthSettings(env = process.env) {
  const sizes = (env.BENCH_GROWTH_DOCS ?? '10000,200000').split(',').map(Number);
  if (sizes.length === 0 || sizes.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= sizes[i - 1]))) {
    throw new Error(
      `BENCH_GROWTH_DOCS must be increasing positive document counts, e.g. 10000,200000; not ${env.BENCH_GROWTH_DOCS}`,
    );
  }
  return {
    sizes,
    queryCount: Number(env.BENCH_GROWTH_QUERIES ?? 300),
    loadConcurrency: Number(env.BENCH_GROWTH_LOAD_CONCURRENCY ?? 2),
    // "api": DocumentsService.createMany (the upload path); "sql": bench/lib/sql-load.js (same tables, ~10 x faster)
    load: env.BENCH_GROWTH_LOAD ?? 'api',
  };
}

const mb = (bytes) => Math.round((Number(bytes) / 1024 / 1024) * 10) / 10;

async function diskSizes(dataSource) {
  const [row] = await dataSource.query(
    `SELECT pg_relation_size('document_chunks') AS heap,
            pg_total_relation_size(c.reltoastrelid) AS toast,
            pg_relation_size('document_chunks_search_idx') AS gin,
            pg_indexes_size('document_chunks') AS indexes,
            pg_total_relation_size('document_chunks') AS chunks_total,
            pg_total_relation_size('documents') AS documents_total,
            pg_total_relation_size('term_stats') AS term_stats_total,
            pg_database_size(current_database()) AS database
       FROM pg_class c WHERE c.oid = 'document_chunks'::regclass`,
  );
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, mb(value)]));
}

/** Buffer touches of the chunk table (heap + TOAST) and its GIN index, as counted so far. */
async function bufferCounters(dataSource) {
  const [row] = await dataSource.query(
    `SELECT t.heap_blks_hit + t.heap_blks_read AS heap_touched, t.heap_blks_read AS heap_read,
            coalesce(t.toast_blks_hit, 0) + coalesce(t.toast_blks_read, 0) AS toast_touched, coalesce(t.toast_blks_read, 0) AS toast_read,
            i.idx_blks_hit + i.idx_blks_read AS gin_touched, i.idx_blks_read AS gin_read
       FROM pg_statio_user_tables t, pg_statio_user_indexes i
      WHERE t.relname = 'document_chunks' AND i.indexrelname = 'document_chunks_search_idx'`,
  );
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]));
}

/** MB of the chunk table, its TOAST and its GIN index held in shared buffers; null without pg_buffercache. */
async function residentInSharedBuffers(dataSource) {
  try {
    await dataSource.query('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
  } catch {
    return null;
  }
  const rows = await dataSource.query(
    `SELECT r.name, count(b.bufferid) * current_setting('block_size')::int AS bytes
       FROM (VALUES ('heap', 'document_chunks'::regclass),
                    ('toast', (SELECT reltoastrelid FROM pg_class WHERE oid = 'document_chunks'::regclass)),
                    ('gin', 'document_chunks_search_idx'::regclass)) AS r(name, rel)
       LEFT JOIN pg_buffercache b
         ON b.relfilenode = pg_relation_filenode(r.rel)
        AND b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
      GROUP BY r.name`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, mb(row.bytes)]));
}

/**
 * VACUUM ANALYZE after each load step, as autovacuum would after a bulk load (it also merges the GIN
 * pending list). On a connection of its own: the service's pool cancels statements after 15 s, and
 * at 1M chunks this takes longer.
 */
async function vacuum(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const table of ['document_chunks', 'term_stats', 'documents']) await client.query(`VACUUM ANALYZE ${table}`);
  } finally {
    await client.end();
  }
}

export async function run({
  databaseUrl,
  settings = growthSettings(),
  log = (m) => console.log(`[search-growth] ${m}`),
}) {
  const { sizes, queryCount, loadConcurrency, load = 'api' } = settings;
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
      JWT_SECRET: 'search-growth-bench-secret-0123456789abcdef',
      LOG_LEVEL: 'error',
    }),
    // Errors only: every bulk insert of a batch is a "slow query" warning, which would bury the figures.
    { logger: ['error'] },
  );
  try {
    const domains = app.get(DomainsService);
    const slug = 'growth-bench';
    if (await domains.findBySlug(slug)) await domains.remove(slug);
    await domains.create({ name: 'Growth bench', slug });
    const domain = await domains.findBySlug(slug);
    const documents = app.get(DocumentsService);
    const retriever = app.get(RETRIEVER);
    const dataSource = app.get(DataSource);
    const [{ shared_buffers: sharedBuffers }] = await dataSource.query('SHOW shared_buffers');

    const loadedWords = loadSciFactWords();
    const corpus = growthCorpus({
      queryCount: queryCount + WARM_UP,
      queryDocuments: sizes[0],
      words: loadedWords,
    });
    let loaded = 0;
    let bytes = 0;
    const table = new LexemeTable();
    if (load === 'sql') await table.learnVocabulary(dataSource, loadedWords.vocabulary, SUFFIXES);
    const loadBySql = async (target) => {
      const started = performance.now();
      // Past the first size, the GIN index is built after the rows, as a restore would (its definition
      // unchanged); two connections insert at once while this process generates the next batch.
      const rebuild = loaded > 0;
      if (rebuild) await dataSource.query('DROP INDEX document_chunks_search_idx');
      const stats = newStats();
      let lastLog = performance.now();
      const worker = async () => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          while (loaded < target) {
            const batch = [];
            for (; batch.length < 500 && loaded < target; loaded++) {
              const doc = corpus.next();
              bytes += Buffer.byteLength(doc.content) + Buffer.byteLength(doc.title);
              batch.push(doc);
            }
            await insertDocuments(client, table, { domainId: domain.id }, batch, stats);
            if (performance.now() - lastLog > 30_000) {
              lastLog = performance.now();
              log(`  loaded ${loaded} of ${target} documents`);
            }
          }
        } finally {
          await client.end();
        }
      };
      await Promise.all([worker(), worker()]);
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await writeStats(client, domain.id, stats);
        if (rebuild) {
          const indexStarted = performance.now();
          await client.query("SET maintenance_work_mem = '256MB'");
          await client.query(`CREATE INDEX document_chunks_search_idx ON document_chunks USING gin (search_vector)`);
          log(`  GIN index built in ${((performance.now() - indexStarted) / 1000).toFixed(1)} s`);
        }
        const check = await verifySample(client);
        log(`  ${check.differing} of ${check.checked} sampled chunks differ from PostgreSQL's own vectors`);
      } finally {
        await client.end();
      }
      return (performance.now() - started) / 1000;
    };
    const loadTo = async (target) => {
      if (load === 'sql') return loadBySql(target);
      const started = performance.now();
      const from = loaded;
      const inFlight = new Set();
      let lastLog = performance.now();
      while (loaded < target) {
        const batch = [];
        for (; batch.length < BATCH && loaded < target; loaded++) {
          const doc = corpus.next();
          const size = Buffer.byteLength(doc.content);
          bytes += size + Buffer.byteLength(doc.title);
          batch.push({
            title: doc.title,
            content: doc.content,
            metadata: { n: loaded },
            contentType: 'text/plain',
            sizeBytes: size,
          });
        }
        const write = documents.createMany({ domainId: domain.id }, batch).finally(() => inFlight.delete(write));
        inFlight.add(write);
        if (inFlight.size >= loadConcurrency) await Promise.race(inFlight);
        if (performance.now() - lastLog > 30_000) {
          lastLog = performance.now();
          log(
            `  loaded ${loaded} of ${target} documents (${Math.round((loaded - from) / ((performance.now() - started) / 1000))} documents/s)`,
          );
        }
      }
      await Promise.all(inFlight);
      return (performance.now() - started) / 1000;
    };

    const stages = [];
    for (const size of sizes) {
      log(`loading documents ${loaded + 1} to ${size}`);
      const loadSeconds = await loadTo(size);
      const vacuumStarted = performance.now();
      await vacuum(databaseUrl);
      const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
      const [{ chunks }] = await dataSource.query(
        'SELECT chunk_count::int AS chunks FROM corpus_stats WHERE scope_id = $1',
        [domain.id],
      );
      const disk = await diskSizes(dataSource);
      log(
        `${size} documents, ${chunks} chunks (${(bytes / 1e6).toFixed(0)} MB of text in all; this step ${loadSeconds.toFixed(1)} s to load, ${vacuumSeconds.toFixed(1)} s to vacuum); GIN ${disk.gin} MB, chunk table with TOAST and indexes ${disk.chunks_total} MB`,
      );

      const queries = corpus.queries;
      for (const query of queries.slice(0, WARM_UP))
        await retriever.search(query.text, { domainId: domain.id }, { limit: 10 });
      await sleep(1500); // pg_statio: backends flush their counters within a second of going idle
      const before = await bufferCounters(dataSource);
      const timings = { keywords: [], sentence: [], claim: [] };
      let empty = 0;
      for (const query of queries.slice(WARM_UP)) {
        const started = performance.now();
        const results = await retriever.search(query.text, { domainId: domain.id }, { limit: 10 });
        timings[query.kind].push(performance.now() - started);
        if (results.length === 0) empty++;
      }
      await sleep(1500);
      const after = await bufferCounters(dataSource);
      const measured = queries.length - WARM_UP;
      const perQuery = Object.fromEntries(
        Object.keys(after).map((key) => [key, Math.round(((after[key] - before[key]) / measured) * 10) / 10]),
      );
      const stage = {
        documents: size,
        chunks,
        loadSeconds: Math.round(loadSeconds),
        documentsPerSecond: Math.round((size - (stages.at(-1)?.documents ?? 0)) / loadSeconds),
        vacuumSeconds: Math.round(vacuumSeconds),
        latencyMs: summarize(Object.values(timings).flat()),
        byKindMs: Object.fromEntries(Object.entries(timings).map(([kind, values]) => [kind, summarize(values)])),
        emptyResults: empty,
        diskMb: disk,
        memory: { sharedBuffers, residentMb: await residentInSharedBuffers(dataSource), buffersPerQuery: perQuery },
      };
      log(
        `  search at ${chunks} chunks: p50 ${stage.latencyMs.p50} ms, p95 ${stage.latencyMs.p95} ms, p99 ${stage.latencyMs.p99} ms (${measured} queries, ${empty} empty)`,
      );
      stages.push(stage);
    }
    const first = stages[0];
    const last = stages.at(-1);
    const growth = {
      chunks: Math.round((last.chunks / first.chunks) * 10) / 10,
      p50: Math.round((last.latencyMs.p50 / first.latencyMs.p50) * 100) / 100,
      p95: Math.round((last.latencyMs.p95 / first.latencyMs.p95) * 100) / 100,
      target: P95_GROWTH_TARGET,
    };
    growth.met = growth.p95 <= P95_GROWTH_TARGET;
    log(
      `p95 at ${last.chunks} chunks / p95 at ${first.chunks} chunks = ${growth.p95} (target <= ${P95_GROWTH_TARGET}: ${growth.met ? 'met' : 'MISSED'}); p50 ratio ${growth.p50}`,
    );
    return { queries: queryCount, warmUp: WARM_UP, loadConcurrency, stages, growth };
  } finally {
    await app.close();
  }
}

/** The tables the section prints (and the standalone script too). */
export function tables(figures, table) {
  table(
    'search-growth: the retriever alone, top 10, one query at a time, same queries at each size',
    figures.stages.map((stage) => ({
      documents: stage.documents,
      chunks: stage.chunks,
      'p50 ms': stage.latencyMs.p50,
      'p95 ms': stage.latencyMs.p95,
      'p99 ms': stage.latencyMs.p99,
      'keywords p95': stage.byKindMs.keywords.p95,
      'sentence p95': stage.byKindMs.sentence.p95,
      'claim p95': stage.byKindMs.claim.p95,
      empty: stage.emptyResults,
      'load docs/s': stage.documentsPerSecond,
    })),
  );
  table(
    'search-growth: index on disk (MB) and in memory',
    figures.stages.map((stage) => ({
      chunks: stage.chunks,
      'chunk heap': stage.diskMb.heap,
      'chunk TOAST': stage.diskMb.toast,
      'GIN index': stage.diskMb.gin,
      'all chunk indexes': stage.diskMb.indexes,
      'chunks total': stage.diskMb.chunks_total,
      'documents total': stage.diskMb.documents_total,
      term_stats: stage.diskMb.term_stats_total,
      database: stage.diskMb.database,
      shared_buffers: stage.memory.sharedBuffers,
      'resident heap/TOAST/GIN MB': stage.memory.residentMb
        ? `${stage.memory.residentMb.heap}/${stage.memory.residentMb.toast}/${stage.memory.residentMb.gin}`
        : 'n/a',
      'blocks/query heap/TOAST/GIN (read)': ['heap', 'toast', 'gin']
        .map(
          (name) =>
            `${stage.memory.buffersPerQuery[`${name}_touched`]}(${stage.memory.buffersPerQuery[`${name}_read`]})`,
        )
        .join(' / '),
    })),
  );
}

async function main() {
  if (!process.argv.includes('--no-build'))
    execSync('npx tsc -p tsconfig.build.json', {
      stdio: 'inherit',
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
  const { createBenchDatabase } = await import('./lib/database.js');
  const database = await createBenchDatabase();
  try {
    const figures = await run({ databaseUrl: database.url });
    tables(figures, (title, rows) => {
      console.log(`\n${title}`);
      console.table(rows);
    });
    console.log(JSON.stringify(figures.growth));
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
