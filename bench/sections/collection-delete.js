/**
 * Deleting a large collection: how long the DELETE takes to answer, how long its documents take to be
 * purged behind it (a batch of 500 per transaction), and what the organization's other writes see
 * meanwhile: `POST /v1/documents/` into `default`, one at a time, timed before the deletion and during
 * the purge. For comparison, a copy deleted the former way: one transaction, the same writes alongside.
 *
 * The search bench's generated corpus (bench/search-latency.js) is loaded into one collection through
 * `POST /v1/documents/batch/` (100 a call); the purge is done when the collection's row is gone.
 *
 *   flock /tmp/bench.lock npm run bench -- collection-delete [--documents=20000]
 */
import pg from 'pg';
import { makeCorpus, summarize } from '../search-latency.js';

export const explicitOnly = true;

export const description = 'DELETE of a large collection: its answer, the purge behind it, and other writes meanwhile';

export async function run(ctx) {
  const documents = Number(ctx.args.find((arg) => arg.startsWith('--documents='))?.split('=')[1] ?? 20_000);
  const { baseUrl } = ctx.service;
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'collection-delete bench');
  const headers = { Authorization: `Bearer ${key.key}` };
  const created = await ctx.call(baseUrl, 'POST', '/v1/collections/', { body: { name: 'Large' }, headers });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id;
  const { docs } = makeCorpus({ documents });
  for (let i = 0; i < docs.length; i += 100) {
    const batch = docs.slice(i, i + 100).map((doc) => ({ title: doc.title, content: doc.content }));
    const stored = await ctx.call(baseUrl, 'POST', '/v1/documents/batch/', {
      body: { collection_id: id, documents: batch },
      headers,
    });
    if (stored.status !== 201) throw new Error(`batch: ${stored.status} ${JSON.stringify(stored.body)}`);
  }
  const db = new pg.Client({ connectionString: ctx.database.url });
  await db.connect();
  try {
    const chunks = (await db.query('SELECT count(*)::int AS n FROM document_chunks WHERE scope_id = $1', [id])).rows[0]
      .n;
    ctx.log(`loaded ${docs.length} documents (${chunks} chunks) into one collection`);

    let n = 0;
    const write = async () => {
      const started = performance.now();
      const response = await ctx.call(baseUrl, 'POST', '/v1/documents/', {
        body: { title: `Note ${n}`, content: `A short note, number ${n++}, about the printer queue.` },
        headers,
      });
      if (response.status !== 201) throw new Error(`write: ${response.status}`);
      return performance.now() - started;
    };
    const before = [];
    for (let i = 0; i < 50; i++) before.push(await write());

    const started = performance.now();
    const deleted = await ctx.call(baseUrl, 'DELETE', `/v1/collections/${id}/`, { headers });
    const answeredMs = performance.now() - started;
    if (deleted.status !== 204) throw new Error(`delete: ${deleted.status}`);
    const during = [];
    let purgedMs = null;
    while (purgedMs === null) {
      during.push(await write());
      const left = await db.query('SELECT 1 FROM collections WHERE id = $1', [id]);
      if (left.rows.length === 0) purgedMs = performance.now() - started;
    }
    // For comparison, the former deletion on a second copy: one transaction (the corpus's rows, then the
    // collection, whose cascade takes every document and chunk), with the same writes alongside.
    const copy = await ctx.call(baseUrl, 'POST', '/v1/collections/', { body: { name: 'Large copy' }, headers });
    for (let i = 0; i < docs.length; i += 100) {
      const batch = docs.slice(i, i + 100).map((doc) => ({ title: doc.title, content: doc.content }));
      await ctx.call(baseUrl, 'POST', '/v1/documents/batch/', {
        body: { collection_id: copy.body.id, documents: batch },
        headers,
      });
    }
    const oneTransaction = (async () => {
      const at = performance.now();
      await db.query('BEGIN');
      await db.query('DELETE FROM corpus_stats WHERE scope_id = $1', [copy.body.id]);
      await db.query('DELETE FROM term_stats WHERE scope_id = $1', [copy.body.id]);
      await db.query('DELETE FROM document_chunks WHERE scope_id = $1', [copy.body.id]);
      await db.query('DELETE FROM collections WHERE id = $1', [copy.body.id]);
      await db.query('COMMIT');
      return performance.now() - at;
    })();
    let done = false;
    const formerMs = oneTransaction.finally(() => (done = true));
    const duringFormer = [];
    while (!done) duringFormer.push(await write());
    const formerTransactionMs = await formerMs;
    const figures = {
      documents: docs.length,
      chunks,
      deleteAnsweredMs: Math.round(answeredMs * 10) / 10,
      purgedSeconds: Math.round(purgedMs / 100) / 10,
      writesBefore: summarize(before),
      writesDuringPurge: summarize(during),
      formerTransactionSeconds: Math.round(formerTransactionMs / 100) / 10,
      writesDuringFormer: summarize(duringFormer),
    };
    ctx.table('collection deletion', [
      { what: 'DELETE answered (ms)', value: figures.deleteAnsweredMs },
      { what: 'purge done (s)', value: figures.purgedSeconds },
      {
        what: 'POST /v1/documents/ before, p50 / p95 / max ms',
        value: `${figures.writesBefore.p50} / ${figures.writesBefore.p95} / ${figures.writesBefore.max}`,
      },
      {
        what: `… during the purge (${during.length}), p50 / p95 / max ms`,
        value: `${figures.writesDuringPurge.p50} / ${figures.writesDuringPurge.p95} / ${figures.writesDuringPurge.max}`,
      },
      { what: 'former: one transaction (s)', value: figures.formerTransactionSeconds },
      {
        what: `… writes during it (${duringFormer.length}), p50 / p95 / max ms`,
        value: `${figures.writesDuringFormer.p50} / ${figures.writesDuringFormer.p95} / ${figures.writesDuringFormer.max}`,
      },
    ]);
    return figures;
  } finally {
    await db.end();
  }
}
