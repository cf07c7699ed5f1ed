/**
 * Full POST /v1/query/ throughput (issue 3) as a ratio to GET /health/ in the same run: a private
 * knowledge base of BENCH_QUERY_DOCS documents (default 500) uploaded through the API, then
 * saturation at 50 connections for BENCH_SECONDS (default 10) each, with an API key.
 */
import { prepareQueryCorpus, QUERY_BODY } from '../lib/query-corpus.js';

export const description = 'POST /v1/query/ (extractive answer, private base) req/s vs GET /health/, 50 conns';

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = Math.max(10, ctx.seconds('BENCH_SECONDS', 10));
  const documents = ctx.seconds('BENCH_QUERY_DOCS', 500);
  const { headers } = await prepareQueryCorpus(ctx, documents, 'query bench');
  const body = QUERY_BODY;

  ctx.log('warm-up (3 s per route)');
  await ctx.cannon({ url: `${baseUrl}/health/`, connections: 50, duration: 3 });
  await ctx.cannon({ url: `${baseUrl}/v1/query/`, method: 'POST', body, headers, connections: 50, duration: 3 });
  ctx.log(`saturation: 50 connections, ${seconds} s each`);
  const health = await ctx.cannon({ url: `${baseUrl}/health/`, connections: 50, duration: seconds });
  const query = await ctx.cannon({
    url: `${baseUrl}/v1/query/`,
    method: 'POST',
    body,
    headers,
    connections: 50,
    duration: seconds,
  });
  const ratio = Math.round((query.requestsPerSecond / health.requestsPerSecond) * 1000) / 1000;
  ctx.table(`query: saturation, 50 connections, ${seconds} s each, ${documents} private documents`, [
    {
      route: 'GET /health/',
      'req/s': health.requestsPerSecond,
      'p50 ms': health.latencyMs.p50,
      'p99 ms': health.latencyMs.p99,
      'non-2xx+err': health.non2xx + health.errors,
      ratio: '1.000',
    },
    {
      route: 'POST /v1/query/ (X-API-Key)',
      'req/s': query.requestsPerSecond,
      'p50 ms': query.latencyMs.p50,
      'p99 ms': query.latencyMs.p99,
      'non-2xx+err': query.non2xx + query.errors,
      ratio: ratio.toFixed(3),
    },
  ]);
  if (query.non2xx + query.errors > 0) throw new Error(`query run had failures: ${JSON.stringify(query.statusCodes)}`);
  return { seconds, documents, health, query, ratio };
}
