/**
 * Full POST /v1/query/ throughput (issue 3) as a ratio to GET /health/ in the same run: a private
 * knowledge base of BENCH_QUERY_DOCS documents (default 500) uploaded through the API, then
 * saturation at 50 connections for BENCH_SECONDS (default 10) each, with an API key.
 */
import { setCredits } from '../lib/quota.js';

export const description = 'POST /v1/query/ (extractive answer, private base) req/s vs GET /health/, 50 conns';

const TOPICS = ['billing', 'rotation', 'ingestion', 'latency', 'quota', 'retention', 'backup', 'failover', 'tracing', 'alerting'];

function documentText(i) {
  const topic = TOPICS[i % TOPICS.length];
  const other = TOPICS[(i * 7 + 3) % TOPICS.length];
  return {
    title: `Runbook ${i}: ${topic}`,
    content:
      `## ${topic} procedure ${i}\n\nWhen ${topic} alarms fire on service ${i}, check the ${other} dashboard first. ` +
      `Escalate to the on-call engineer for ${topic} after fifteen minutes. `.repeat(3) +
      `\n\nThe ${other} team owns step ${i % 13}. Record every change in the ${topic} log and review it weekly.`,
  };
}

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = Math.max(10, ctx.seconds('BENCH_SECONDS', 10));
  const documents = ctx.seconds('BENCH_QUERY_DOCS', 500);
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'query bench');
  await setCredits(ctx.database.url, user.email, 100_000_000);

  ctx.log(`uploading ${documents} documents`);
  for (let i = 0; i < documents; i++) {
    const response = await ctx.call(baseUrl, 'POST', '/v1/documents/', { body: documentText(i), headers: user.auth });
    if (response.status !== 201) throw new Error(`upload ${i} answered ${response.status}`);
  }
  const body = { query: 'Who do I escalate to when quota alarms fire?', top_k: 5 };
  const headers = { 'X-API-Key': key.key };
  const probe = await ctx.call(baseUrl, 'POST', '/v1/query/', { body, headers });
  if (probe.status !== 200 || probe.body.sources.length === 0) throw new Error(`probe query answered ${probe.status} with no sources`);

  ctx.log('warm-up (3 s per route)');
  await ctx.cannon({ url: `${baseUrl}/health/`, connections: 50, duration: 3 });
  await ctx.cannon({ url: `${baseUrl}/v1/query/`, method: 'POST', body, headers, connections: 50, duration: 3 });
  ctx.log(`saturation: 50 connections, ${seconds} s each`);
  const health = await ctx.cannon({ url: `${baseUrl}/health/`, connections: 50, duration: seconds });
  const query = await ctx.cannon({ url: `${baseUrl}/v1/query/`, method: 'POST', body, headers, connections: 50, duration: seconds });
  const ratio = Math.round((query.requestsPerSecond / health.requestsPerSecond) * 1000) / 1000;
  ctx.table(`query: saturation, 50 connections, ${seconds} s each, ${documents} private documents`, [
    { route: 'GET /health/', 'req/s': health.requestsPerSecond, 'p50 ms': health.latencyMs.p50, 'p99 ms': health.latencyMs.p99, 'non-2xx+err': health.non2xx + health.errors, ratio: '1.000' },
    { route: 'POST /v1/query/ (X-API-Key)', 'req/s': query.requestsPerSecond, 'p50 ms': query.latencyMs.p50, 'p99 ms': query.latencyMs.p99, 'non-2xx+err': query.non2xx + query.errors, ratio: ratio.toFixed(3) },
  ]);
  if (query.non2xx + query.errors > 0) throw new Error(`query run had failures: ${JSON.stringify(query.statusCodes)}`);
  return { seconds, documents, health, query, ratio };
}
