/**
 * OpenAI's vector-store search against `POST /v1/search/` over the same collection, through the running
 * service (HTTP, an API key): the target is the vector-store route within 1.1 × the search route.
 * 1,000 generated documents (bench/search-latency.js) go into one collection; the same queries, top 10,
 * are sent one at a time to both routes, interleaved (alternating which goes first).
 *
 *   flock /tmp/bench.lock npm run bench -- vector-stores [--documents=1000] [--queries=200]
 */
import { makeCorpus, summarize } from '../search-latency.js';

export const explicitOnly = true;

export const description = 'POST /v1/vector_stores/{id}/search vs POST /v1/search/ on one collection (target ≤ 1.1×)';

export async function run(ctx) {
  const option = (name, fallback) =>
    Number(ctx.args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const documents = option('documents', 1000);
  const queryCount = option('queries', 200);
  const { baseUrl } = ctx.service;
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'vector-store bench');
  const headers = { Authorization: `Bearer ${key.key}` };
  const store = await ctx.call(baseUrl, 'POST', '/v1/vector_stores', { body: { name: 'Bench' }, headers });
  if (store.status !== 201) throw new Error(`create store: ${store.status} ${JSON.stringify(store.body)}`);
  const id = store.body.id;
  const { docs, queries } = makeCorpus({ documents });
  for (let i = 0; i < docs.length; i += 50) {
    const batch = docs.slice(i, i + 50).map((doc) => ({ title: doc.title, content: doc.content }));
    const stored = await ctx.call(baseUrl, 'POST', '/v1/documents/batch/', {
      body: { collection_id: id, documents: batch },
      headers,
    });
    if (stored.status !== 201) throw new Error(`batch: ${stored.status} ${JSON.stringify(stored.body)}`);
  }
  ctx.log(`loaded ${docs.length} documents into one collection`);
  const routes = {
    search: (text) =>
      ctx.call(baseUrl, 'POST', '/v1/search/', { body: { query: text, top_k: 10, collection_ids: [id] }, headers }),
    store: (text) =>
      ctx.call(baseUrl, 'POST', `/v1/vector_stores/${id}/search`, {
        body: { query: text, max_num_results: 10 },
        headers,
      }),
  };
  const all = queries(queryCount + 20);
  for (const query of all.slice(0, 20)) {
    await routes.search(query.text);
    await routes.store(query.text);
  }
  const timings = { search: [], store: [] };
  const timed = async (route, text) => {
    const started = performance.now();
    const response = await routes[route](text);
    if (response.status !== 200) throw new Error(`${route}: ${response.status} ${JSON.stringify(response.body)}`);
    timings[route].push(performance.now() - started);
  };
  for (const [i, query] of all.slice(20).entries()) {
    const order = i % 2 === 0 ? ['search', 'store'] : ['store', 'search'];
    for (const route of order) await timed(route, query.text);
  }
  const search = summarize(timings.search);
  const vectorStore = summarize(timings.store);
  const ratio = (x, y) => Math.round((x / y) * 100) / 100;
  const figures = {
    documents: docs.length,
    searchMs: search,
    vectorStoreMs: vectorStore,
    p50Ratio: ratio(vectorStore.p50, search.p50),
    p95Ratio: ratio(vectorStore.p95, search.p95),
  };
  ctx.table('vector-store search vs POST /v1/search/, one collection, top 10, one request at a time (target ≤ 1.1×)', [
    { route: 'POST /v1/search/', 'p50 ms': search.p50, 'p95 ms': search.p95 },
    { route: 'POST /v1/vector_stores/{id}/search', 'p50 ms': vectorStore.p50, 'p95 ms': vectorStore.p95 },
    { route: 'vector store / search', 'p50 ms': figures.p50Ratio, 'p95 ms': figures.p95Ratio },
  ]);
  return figures;
}
