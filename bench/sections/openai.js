/**
 * POST /v1/chat/completions (issue 11) against POST /v1/query/ for the same question on the same
 * private knowledge base as the `query` section, in the same run: 50 connections, BENCH_SECONDS
 * (default 10) per measurement, measured in the order query, completions, completions, query so that
 * drift of a loaded machine falls on both alike. Target: completions within 10 % of query.
 */
import { prepareQueryCorpus, QUERY_BODY } from '../lib/query-corpus.js';

export const description = 'POST /v1/chat/completions req/s vs POST /v1/query/ (same question), 50 conns';

const COMPLETION_BODY = { model: 'private', messages: [{ role: 'user', content: QUERY_BODY.query }] };

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = Math.max(10, ctx.seconds('BENCH_SECONDS', 10));
  const documents = ctx.seconds('BENCH_QUERY_DOCS', 500);
  const { headers } = await prepareQueryCorpus(ctx, documents, 'openai bench');
  const routes = {
    query: { url: `${baseUrl}/v1/query/`, body: QUERY_BODY },
    completions: { url: `${baseUrl}/v1/chat/completions`, body: COMPLETION_BODY },
  };
  const probe = await ctx.call(baseUrl, 'POST', '/v1/chat/completions', { body: COMPLETION_BODY, headers });
  if (probe.status !== 200 || probe.body.sources.length === 0)
    throw new Error(`probe completion answered ${probe.status} with no sources`);
  const measure = (name, duration) =>
    ctx.cannon({ ...routes[name], method: 'POST', headers, connections: 50, duration });

  ctx.log('warm-up (3 s per route)');
  await measure('query', 3);
  await measure('completions', 3);
  ctx.log(`saturation: 50 connections, ${seconds} s per measurement, query/completions/completions/query`);
  const runs = { query: [], completions: [] };
  for (const name of ['query', 'completions', 'completions', 'query']) runs[name].push(await measure(name, seconds));

  const summary = (results) => ({
    requestsPerSecond: Math.round(results.reduce((sum, r) => sum + r.requestsPerSecond, 0) / results.length),
    p50: Math.max(...results.map((r) => r.latencyMs.p50)),
    p99: Math.max(...results.map((r) => r.latencyMs.p99)),
    failures: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
  });
  const query = summary(runs.query);
  const completions = summary(runs.completions);
  const ratio = Math.round((completions.requestsPerSecond / query.requestsPerSecond) * 1000) / 1000;
  ctx.table(`openai: saturation, 50 connections, 2 × ${seconds} s per route, ${documents} private documents`, [
    {
      route: 'POST /v1/query/',
      'req/s': query.requestsPerSecond,
      'p50 ms': query.p50,
      'p99 ms': query.p99,
      'non-2xx+err': query.failures,
      ratio: '1.000',
    },
    {
      route: 'POST /v1/chat/completions',
      'req/s': completions.requestsPerSecond,
      'p50 ms': completions.p50,
      'p99 ms': completions.p99,
      'non-2xx+err': completions.failures,
      ratio: ratio.toFixed(3),
    },
  ]);
  if (query.failures + completions.failures > 0) throw new Error('openai run had failures');
  return { seconds, documents, query, completions, ratio, withinTenPercent: ratio >= 0.9 };
}
