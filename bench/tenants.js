/**
 * Many tenants in one database (issue 24): a small tenant's search p50/p95 among ~1,000,000 chunks of
 * other tenants, against the same tenant alone in a fresh database, in one run.
 *
 * Tenants are organizations (rows made in SQL; each gets its `default` collection from the Collections
 * trigger): one large, BENCH_TENANTS_MEDIUM medium and BENCH_TENANTS_SMALL small ones, their documents
 * from bench/lib/growth-corpus.js (SciFact's word frequencies, each tenant its own seed, so its own topic
 * words) loaded by bench/lib/sql-load.js into the service's own tables and indexes (the GIN index built
 * after the rows, with its migration's definition). The tenants' batches are interleaved, so a small
 * tenant's chunks are spread over the table as months of uploads would spread them.
 *
 * The measured tenant is one of the small ones, with two collections asked together (a corpus of two
 * scope ids, as `collection_ids` makes one). The same tenant (same seed, same documents, same queries) is
 * then loaded alone into a fresh database. Its queries (keywords, sentences, SciFact claims, as in
 * search-growth) run through the retriever in this process, top 10, one at a time, after a warm-up,
 * each query on both databases in turn (the order swapped at every query), BENCH_TENANTS_ROUNDS rounds;
 * every ratio is of figures from the same round, and the target is judged on their median.
 *
 * Env: BENCH_TENANTS_LARGE_DOCS (100000), BENCH_TENANTS_MEDIUM (30), BENCH_TENANTS_MEDIUM_DOCS (2000),
 *      BENCH_TENANTS_SMALL (300), BENCH_TENANTS_SMALL_DOCS (80), BENCH_TENANTS_QUERIES (200), BENCH_TENANTS_ROUNDS (5)
 * (~5.4 chunks per document: the defaults make ~1,000,000 chunks.)
 *      BENCH_TENANTS_CROWD_URL: add the tenants to this existing database (already migrated, e.g. one kept by
 *      search-growth with its 1M-chunk domain, BENCH_TENANTS_LARGE_DOCS=0) instead of a fresh one; its GIN
 *      index is kept and maintained by the inserts.
 *      BENCH_TENANTS_ALONE_URL: the database of the measured tenant alone; with both URLs, when the measured
 *      tenant is in both already (an earlier run's databases, BENCH_KEEP_DATABASE=1), nothing is loaded: measured only.
 */
import pg from 'pg';
import { growthCorpus, loadSciFactWords, SUFFIXES } from './lib/growth-corpus.js';
import { insertDocuments, LexemeTable, newStats, verifySample, writeStats } from './lib/sql-load.js';
import { summarize } from './search-latency.js';

const WARM_UP = 30;
const BATCH = 100;
const P95_TARGET = 1.3;

export function tenantSettings(env = process.env) {
  const number = (name, fallback) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${env[name]}`);
    return value;
  };
  return {
    largeDocs: number('BENCH_TENANTS_LARGE_DOCS', 100_000),
    medium: number('BENCH_TENANTS_MEDIUM', 30),
    mediumDocs: number('BENCH_TENANTS_MEDIUM_DOCS', 2000),
    small: number('BENCH_TENANTS_SMALL', 300),
    smallDocs: number('BENCH_TENANTS_SMALL_DOCS', 80),
    queries: number('BENCH_TENANTS_QUERIES', 200),
    rounds: Math.max(1, number('BENCH_TENANTS_ROUNDS', 5)),
  };
}

async function startApp(databaseUrl) {
  const { createApp } = await import('../dist/app.js');
  const { loadConfig } = await import('../dist/config/env.schema.js');
  return createApp(
    loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: 'tenants-bench-secret-0123456789abcdef0123',
      LOG_LEVEL: 'error',
    }),
    { logger: ['error'] },
  );
}

/** An organization (its `default` collection comes from the trigger) and its other collections' ids. */
async function createTenant(client, name, extraCollections = 0) {
  const {
    rows: [org],
  } = await client.query(`INSERT INTO organizations (name) VALUES ($1) RETURNING id`, [name]);
  const collections = [org.id];
  for (let i = 1; i <= extraCollections; i++) {
    const { rows } = await client.query(
      `INSERT INTO collections (organization_id, name) VALUES ($1, $2) RETURNING id`,
      [org.id, `collection ${i}`],
    );
    collections.push(rows[0].id);
  }
  return { organizationId: org.id, collections };
}

/**
 * Loads `tenants` ([{ name, documents, seed, collections: n, queries? }]) into the database, their batches
 * interleaved; returns each tenant's ids (and the measured one's queries). The GIN index is dropped
 * before and rebuilt after (timed).
 */
async function loadTenants(databaseUrl, tenants, words, log, { rebuildIndex = true } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const table = new LexemeTable();
  const started = performance.now();
  try {
    await table.learnVocabulary(client, words.vocabulary, SUFFIXES);
    if (rebuildIndex) await client.query('DROP INDEX IF EXISTS document_chunks_search_idx');
    const jobs = [];
    const loaded = [];
    for (const tenant of tenants) {
      const ids = await createTenant(client, tenant.name, tenant.collections - 1);
      const corpus = growthCorpus({
        queryCount: tenant.queries ?? 0,
        queryDocuments: tenant.documents,
        seed: tenant.seed,
        words,
      });
      const state = { ...tenant, ...ids, corpus, stats: ids.collections.map(() => newStats()), done: 0 };
      loaded.push(state);
      const batches = Math.ceil(tenant.documents / BATCH);
      for (let b = 0; b < batches; b++) jobs.push({ state, at: (b + 0.5) / batches });
    }
    jobs.sort((a, b) => a.at - b.at);
    let chunksBefore = 0;
    let lastLog = performance.now();
    let next = 0;
    const worker = async () => {
      const own = new pg.Client({ connectionString: databaseUrl });
      await own.connect();
      try {
        while (next < jobs.length) {
          const { state } = jobs[next++];
          // A tenant's documents go to its collections in turn, one batch each.
          const slot = Math.floor(state.done / BATCH) % state.collections.length;
          const batch = [];
          for (; batch.length < BATCH && state.done < state.documents; state.done++) batch.push(state.corpus.next());
          const owner = { organizationId: state.organizationId, collectionId: state.collections[slot] };
          await insertDocuments(own, table, owner, batch, state.stats[slot]);
          if (performance.now() - lastLog > 30_000) {
            lastLog = performance.now();
            log(`  ${next} of ${jobs.length} batches loaded`);
          }
        }
      } finally {
        await own.end();
      }
    };
    await Promise.all([worker(), worker()]);
    for (const state of loaded)
      for (const [i, scopeId] of state.collections.entries()) {
        chunksBefore += state.stats[i].chunks;
        await writeStats(client, scopeId, state.stats[i]);
      }
    const loadSeconds = (performance.now() - started) / 1000;
    const indexStarted = performance.now();
    if (rebuildIndex) {
      await client.query(`SET maintenance_work_mem = '256MB'`);
      await client.query(`CREATE INDEX document_chunks_search_idx ON document_chunks USING gin (search_vector)`);
    }
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    for (const name of ['document_chunks', 'documents', 'term_stats', 'corpus_stats'])
      await client.query(`VACUUM ANALYZE ${name}`);
    const check = await verifySample(client);
    const {
      rows: [size],
    } = await client.query(
      `SELECT pg_total_relation_size('document_chunks') AS chunks, pg_relation_size('document_chunks_search_idx') AS gin`,
    );
    const {
      rows: [all],
    } = await client.query(
      `SELECT count(*)::int AS chunks, count(DISTINCT scope_id)::int AS scopes FROM document_chunks`,
    );
    return {
      tenants: loaded,
      chunks: all.chunks,
      scopes: all.scopes,
      chunksLoaded: chunksBefore,
      loadSeconds: Math.round(loadSeconds),
      indexSeconds: Math.round(indexSeconds),
      differingVectors: `${check.differing} of ${check.checked}`,
      chunkTableMb: Math.round(Number(size.chunks) / 1e6),
      ginMb: Math.round(Number(size.gin) / 1e6),
    };
  } finally {
    await client.end();
  }
}

/**
 * The queries on both databases, query by query, the order of the two swapped at each query (so a burst
 * of other work on the machine falls on both sides alike), after warming both.
 */
async function measurePair(sides, queries) {
  for (const side of sides)
    for (const query of queries.slice(0, WARM_UP))
      await side.retriever.search(query.text, { collectionIds: side.collections }, { limit: 10 });
  const timings = sides.map(() => []);
  const empty = sides.map(() => 0);
  for (const [i, query] of queries.slice(WARM_UP).entries()) {
    for (const s of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const started = performance.now();
      const results = await sides[s].retriever.search(
        query.text,
        { collectionIds: sides[s].collections },
        { limit: 10 },
      );
      timings[s].push(performance.now() - started);
      if (results.length === 0) empty[s]++;
    }
  }
  return sides.map((_, s) => ({ ...summarize(timings[s]), empty: empty[s] }));
}

/** The measured tenant's collections in a database it was loaded into earlier, or null. */
async function collectionsOf(app, name) {
  const { DataSource } = await import('typeorm');
  const rows = await app
    .get(DataSource)
    .query(
      `SELECT c.id FROM collections c JOIN organizations o ON o.id = c.organization_id WHERE o.name = $1 ORDER BY c.created_at, c.id`,
      [name],
    );
  return rows.length > 0 ? rows.map((row) => row.id) : null;
}

export async function run({
  createDatabase,
  crowdUrl = process.env.BENCH_TENANTS_CROWD_URL,
  aloneUrl = process.env.BENCH_TENANTS_ALONE_URL,
  settings = tenantSettings(),
  log = (m) => console.log(`[tenants] ${m}`),
}) {
  const { RETRIEVER } = await import('../dist/retrieval/retriever.js');
  const words = loadSciFactWords();
  const measured = {
    name: 'small tenant (measured)',
    documents: settings.smallDocs,
    seed: 7_000_001,
    collections: 2,
    queries: settings.queries + WARM_UP,
  };
  const crowd = [
    ...(settings.largeDocs > 0
      ? [{ name: 'large tenant', documents: settings.largeDocs, seed: 7_100_000, collections: 1 }]
      : []),
    ...Array.from({ length: settings.medium }, (_, i) => ({
      name: `medium tenant ${i}`,
      documents: settings.mediumDocs,
      seed: 7_200_000 + i,
      collections: 1 + (i % 3),
    })),
    ...Array.from({ length: settings.small }, (_, i) => ({
      name: `small tenant ${i}`,
      documents: settings.smallDocs,
      seed: 7_300_000 + i,
      collections: 1 + (i % 2),
    })),
  ];
  // The measured tenant sits in the middle of the small ones.
  crowd.splice(crowd.length - Math.ceil(settings.small / 2), 0, measured);

  const crowdedDb = crowdUrl ? { url: crowdUrl } : await createDatabase();
  const aloneDb = aloneUrl ? { url: aloneUrl } : await createDatabase();
  log(`databases: crowded ${crowdedDb.name ?? crowdUrl}, alone ${aloneDb.name ?? aloneUrl}`);
  const crowdedApp = await startApp(crowdedDb.url);
  const aloneApp = await startApp(aloneDb.url);
  try {
    // Both databases given and the measured tenant already in both (an earlier run's): measure again only.
    const loadedBefore = crowdUrl && aloneUrl ? await collectionsOf(crowdedApp, measured.name) : null;
    const aloneBefore = loadedBefore ? await collectionsOf(aloneApp, measured.name) : null;
    if (loadedBefore && aloneBefore) {
      log('the measured tenant is in both databases already: measuring only');
      const corpus = growthCorpus({
        queryCount: measured.queries,
        queryDocuments: measured.documents,
        seed: measured.seed,
        words,
      });
      for (let i = 0; i < measured.documents; i++) corpus.next();
      return await measureRounds({
        settings,
        log,
        queries: corpus.queries,
        sides: [
          { retriever: crowdedApp.get(RETRIEVER), collections: loadedBefore },
          { retriever: aloneApp.get(RETRIEVER), collections: aloneBefore },
        ],
        summary: { measuredOnly: true },
      });
    }
    log(
      `loading ${crowd.length} tenants (${crowd.reduce((sum, t) => sum + t.documents, 0)} documents) into the crowded database`,
    );
    const crowded = await loadTenants(crowdedDb.url, crowd, words, log, { rebuildIndex: !crowdUrl });
    log(
      `crowded: ${crowded.chunks} chunks over ${crowded.scopes} corpora (${crowded.chunksLoaded} loaded in ${crowded.loadSeconds} s), GIN built in ${crowded.indexSeconds} s (${crowded.ginMb} MB), vectors differing ${crowded.differingVectors}`,
    );
    const alone = await loadTenants(aloneDb.url, [measured], words, log);
    log(`alone: ${alone.chunks} chunks`);
    const crowdedTenant = crowded.tenants.find((t) => t.name === measured.name);
    const aloneTenant = alone.tenants[0];
    return await measureRounds({
      settings,
      log,
      queries: crowdedTenant.corpus.queries,
      sides: [
        { retriever: crowdedApp.get(RETRIEVER), collections: crowdedTenant.collections },
        { retriever: aloneApp.get(RETRIEVER), collections: aloneTenant.collections },
      ],
      summary: {
        tenants: { large: settings.largeDocs > 0 ? 1 : 0, medium: settings.medium, small: settings.small + 1 },
        existingCrowd: Boolean(crowdUrl),
        crowded: { ...crowded, tenants: undefined },
        measuredTenant: { documents: measured.documents, chunks: alone.chunks, collections: measured.collections },
      },
    });
  } finally {
    await crowdedApp.close();
    await aloneApp.close();
  }
}

async function measureRounds({ settings, log, queries, sides, summary }) {
  const rounds = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const [inCrowd, byItself] = await measurePair(sides, queries);
    const ratio = {
      p50: Math.round((inCrowd.p50 / byItself.p50) * 100) / 100,
      p95: Math.round((inCrowd.p95 / byItself.p95) * 100) / 100,
    };
    log(
      `round ${round}: crowded p50 ${inCrowd.p50} ms p95 ${inCrowd.p95} ms; alone p50 ${byItself.p50} ms p95 ${byItself.p95} ms; p95 ratio ${ratio.p95}`,
    );
    rounds.push({ round, crowded: inCrowd, alone: byItself, ratio });
  }
  const p95s = rounds.map((r) => r.ratio.p95).sort((a, b) => a - b);
  const median = p95s[Math.floor((p95s.length - 1) / 2)];
  return {
    settings,
    ...summary,
    rounds,
    p95Ratio: { median, worst: p95s.at(-1), target: P95_TARGET, met: median <= P95_TARGET },
  };
}

export function tables(figures, table) {
  table(
    figures.measuredOnly
      ? 'tenants: the measured tenant among the crowd of an earlier run, and alone; retriever, top 10'
      : `tenants: a small tenant (${figures.measuredTenant.chunks} chunks, ${figures.measuredTenant.collections} collections asked together) among ${figures.crowded.chunks} chunks of ${figures.crowded.scopes} corpora, and alone; retriever, top 10`,
    figures.rounds.map((r) => ({
      round: r.round,
      'crowded p50': r.crowded.p50,
      'crowded p95': r.crowded.p95,
      'alone p50': r.alone.p50,
      'alone p95': r.alone.p95,
      'p50 ratio': r.ratio.p50,
      'p95 ratio': r.ratio.p95,
      empty: `${r.crowded.empty}/${r.alone.empty}`,
    })),
  );
}
