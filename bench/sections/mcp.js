/**
 * MCP's `search` tool (issue 25) against POST /v1/search/ for the same query on the same private
 * knowledge base as the `query` section, in the same run: 50 connections, BENCH_SECONDS (default 10)
 * per measurement, in the order search, mcp, mcp, search so that drift of a loaded machine falls on both
 * alike. Each MCP request is what an agent's client sends once connected: one `tools/call` POST (the
 * server is stateless, so no session to set up). Target: MCP's p50 latency and its throughput within
 * 1.2 × those of POST /v1/search/.
 */
import { prepareQueryCorpus, QUERY_BODY } from '../lib/query-corpus.js';

export const description = 'MCP tools/call search vs POST /v1/search/ (same query), 50 conns; target ≤ 1.2 ×';

const SEARCH_BODY = { query: QUERY_BODY.query, top_k: 5 };
const MCP_BODY = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'search', arguments: SEARCH_BODY },
};
const MCP_HEADERS = { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' };

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = Math.max(10, ctx.seconds('BENCH_SECONDS', 10));
  const documents = ctx.seconds('BENCH_QUERY_DOCS', 500);
  const { headers } = await prepareQueryCorpus(ctx, documents, 'mcp bench');
  const routes = {
    search: { url: `${baseUrl}/v1/search/`, body: SEARCH_BODY, headers },
    mcp: { url: `${baseUrl}/mcp`, body: MCP_BODY, headers: { ...headers, ...MCP_HEADERS } },
  };
  // A tool error is an HTTP 200 too: check that both answer the same passages before measuring.
  const rest = await ctx.call(baseUrl, 'POST', '/v1/search/', { body: SEARCH_BODY, headers });
  const mcp = await ctx.call(baseUrl, 'POST', '/mcp', { body: MCP_BODY, headers: routes.mcp.headers });
  const found = mcp.body?.result?.structuredContent?.results ?? [];
  if (rest.status !== 200 || mcp.status !== 200 || mcp.body.result.isError || found.length === 0)
    throw new Error(`probe: REST ${rest.status}, MCP ${mcp.status} ${JSON.stringify(mcp.body).slice(0, 300)}`);
  if (found.map((r) => r.document_id).join() !== rest.body.results.map((r) => r.document_id).join())
    throw new Error('probe: MCP search and POST /v1/search/ found different documents');
  const measure = (name, duration) => ctx.cannon({ ...routes[name], method: 'POST', connections: 50, duration });

  ctx.log('warm-up (3 s per route)');
  await measure('search', 3);
  await measure('mcp', 3);
  ctx.log(`saturation: 50 connections, ${seconds} s per measurement, search/mcp/mcp/search`);
  const runs = { search: [], mcp: [] };
  for (const name of ['search', 'mcp', 'mcp', 'search']) runs[name].push(await measure(name, seconds));

  const summary = (results) => ({
    requestsPerSecond: Math.round(results.reduce((sum, r) => sum + r.requestsPerSecond, 0) / results.length),
    p50: Math.max(...results.map((r) => r.latencyMs.p50)),
    p99: Math.max(...results.map((r) => r.latencyMs.p99)),
    failures: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
  });
  const search = summary(runs.search);
  const tools = summary(runs.mcp);
  const round = (x) => Math.round(x * 1000) / 1000;
  // How much slower MCP is: > 1 means slower; the target is ≤ 1.2 on both.
  const throughputRatio = round(search.requestsPerSecond / tools.requestsPerSecond);
  const latencyRatio = round(tools.p50 / search.p50);
  ctx.table(`mcp: saturation, 50 connections, 2 × ${seconds} s per route, ${documents} private documents`, [
    {
      route: 'POST /v1/search/',
      'req/s': search.requestsPerSecond,
      'p50 ms': search.p50,
      'p99 ms': search.p99,
      'non-2xx+err': search.failures,
      'slower ×': '1.000',
    },
    {
      route: 'POST /mcp tools/call search',
      'req/s': tools.requestsPerSecond,
      'p50 ms': tools.p50,
      'p99 ms': tools.p99,
      'non-2xx+err': tools.failures,
      'slower ×': `${throughputRatio.toFixed(3)} (p50 ${latencyRatio.toFixed(3)})`,
    },
  ]);
  if (search.failures + tools.failures > 0) throw new Error('mcp run had failures');
  return {
    seconds,
    documents,
    search,
    mcp: tools,
    throughputRatio,
    latencyRatio,
    withinTarget: throughputRatio <= 1.2 && latencyRatio <= 1.2,
  };
}
