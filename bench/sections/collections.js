/**
 * Collections: what asking several collections at once costs against asking one of the same total
 * size, and how long the Collections migration takes on a bench-sized corpus.
 *
 * The search bench's generated corpus (bench/search-latency.js), 5,000 documents, is loaded twice into
 * one organization: whole into one collection, and split across three (documents i ≡ 0, 1, 2 mod 3).
 * The same queries are then timed, one at a time and interleaved, against the one collection and
 * against the three together (which rank as one corpus, statistics summed: the results are the same).
 * Target: three ≤ 1.3 × one (p50 and p95).
 *
 * Then the migration: with those 10,000 documents (about 50,000 chunks) in place, the Collections
 * migration is undone and run again, timed (it fills documents.collection_id in batches; the search
 * index is left as it is). Run last: after it, every document is in `default`.
 *
 *   flock /tmp/bench.lock npm run bench -- collections [--documents=5000] [--queries=200]
 */
import { makeCorpus, summarize } from '../search-latency.js';

export const explicitOnly = true;

export const description =
  'asking 3 collections vs 1 of the same total size (target ≤ 1.3×), and the Collections migration time';

export async function run(ctx) {
  const option = (name, fallback) =>
    Number(ctx.args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const documents = option('documents', 5000);
  const queryCount = option('queries', 200);
  const database = await ctx.createDatabase();
  const { createApp } = await import('../../dist/app.js');
  const { loadConfig } = await import('../../dist/config/env.schema.js');
  const { DocumentsService } = await import('../../dist/documents/documents.service.js');
  const { RETRIEVER } = await import('../../dist/retrieval/retriever.js');
  const { DataSource } = await import('typeorm');
  const app = await createApp(
    loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      JWT_SECRET: 'collections-bench-secret-0123456789abcdef',
      LOG_LEVEL: 'warn',
    }),
    { logger: ['error', 'warn'] },
  );
  try {
    const dataSource = app.get(DataSource);
    const [organization] = await dataSource.query(
      `INSERT INTO organizations (name) VALUES ('Collections bench') RETURNING id`,
    );
    const collection = async (name) =>
      (
        await dataSource.query(`INSERT INTO collections (organization_id, name) VALUES ($1, $2) RETURNING id`, [
          organization.id,
          name,
        ])
      )[0].id;
    const whole = await collection('whole');
    const parts = [await collection('part 0'), await collection('part 1'), await collection('part 2')];

    const { docs, queries } = makeCorpus({ documents });
    const service = app.get(DocumentsService);
    const loadStarted = performance.now();
    const load = async (collectionId, subset) => {
      for (let i = 0; i < subset.length; i += 100) {
        const batch = subset.slice(i, i + 100).map((doc) => ({
          title: doc.title,
          content: doc.content,
          metadata: {},
          contentType: 'text/plain',
          sizeBytes: Buffer.byteLength(doc.content),
        }));
        await service.createMany({ organizationId: organization.id, collectionId }, batch);
      }
    };
    await load(whole, docs);
    ctx.log(`loaded ${docs.length} documents into one collection`);
    for (let p = 0; p < 3; p++)
      await load(
        parts[p],
        docs.filter((_, i) => i % 3 === p),
      );
    ctx.log(`loaded them again across three collections in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s`);
    for (const table of ['document_chunks', 'term_stats', 'corpus_stats', 'documents'])
      await dataSource.query(`VACUUM ANALYZE ${table}`);
    const [{ chunks }] = await dataSource.query('SELECT count(*)::int AS chunks FROM document_chunks');

    const retriever = app.get(RETRIEVER);
    const all = queries(queryCount + 30);
    const one = { collectionIds: [whole] };
    const three = { collectionIds: parts };
    for (const query of all.slice(0, 30)) {
      await retriever.search(query.text, one, { limit: 10 });
      await retriever.search(query.text, three, { limit: 10 });
    }
    const timings = { one: [], three: [] };
    let differing = 0;
    const timed = async (query, corpus) => {
      const started = performance.now();
      const results = await retriever.search(query.text, corpus, { limit: 10 });
      return { ms: performance.now() - started, results };
    };
    for (const [i, query] of all.slice(30).entries()) {
      // Alternating which goes first, so both see the same load and cache state.
      const first = i % 2 === 0 ? await timed(query, one) : await timed(query, three);
      const second = i % 2 === 0 ? await timed(query, three) : await timed(query, one);
      const [a, b] = i % 2 === 0 ? [first, second] : [second, first];
      timings.one.push(a.ms);
      timings.three.push(b.ms);
      const key = (results) =>
        results
          .map((r) => `${r.title}:${r.score}`)
          .sort()
          .join('|');
      if (key(a.results) !== key(b.results)) differing++;
    }
    const oneMs = summarize(timings.one);
    const threeMs = summarize(timings.three);
    const ratio = (x, y) => Math.round((x / y) * 100) / 100;

    // The migration, on the 2 × `documents` documents loaded above.
    // Collections and every migration after it, newest first.
    const { migrations } = await import('../../dist/database/migrations/index.js');
    const since = migrations.length - migrations.findIndex((migration) => migration.name.startsWith('Collections'));
    for (let i = 0; i < since; i++) await dataSource.undoLastMigration({ transaction: 'each' });
    const migrationStarted = performance.now();
    await dataSource.runMigrations({ transaction: 'each' });
    const migrationSeconds = (performance.now() - migrationStarted) / 1000;
    const [{ filled }] = await dataSource.query(
      'SELECT count(*)::int AS filled FROM documents WHERE collection_id = organization_id',
    );

    const figures = {
      documentsPerCorpus: docs.length,
      chunks,
      queries: oneMs.count,
      oneMs,
      threeMs,
      threeOverOneP50: ratio(threeMs.p50, oneMs.p50),
      threeOverOneP95: ratio(threeMs.p95, oneMs.p95),
      resultsDiffering: differing,
      migration: {
        documents: filled,
        chunks,
        seconds: Math.round(migrationSeconds * 100) / 100,
      },
    };
    ctx.table('collections: one collection vs the same documents across three, top 10, one query at a time', [
      { asked: 'one collection', ...msRow(oneMs) },
      { asked: 'three collections', ...msRow(threeMs) },
      {
        asked: 'three / one (target ≤ 1.3)',
        'p50 ms': figures.threeOverOneP50,
        'p95 ms': figures.threeOverOneP95,
        'p99 ms': '',
        'results differing': differing,
      },
    ]);
    ctx.table('Collections migration (undone, then run again and timed)', [
      { documents: filled, chunks, seconds: figures.migration.seconds },
    ]);
    return figures;
  } finally {
    await app.close();
  }
}

function msRow(ms) {
  return { 'p50 ms': ms.p50, 'p95 ms': ms.p95, 'p99 ms': ms.p99, 'results differing': '' };
}
