/**
 * POST /v1/query/ against its own database work (issue 9): target >= 0.8 x the floor, i.e. the
 * service adds at most 20 % to what the database must do anyway.
 *
 * The knowledge base and question are the `query` section's (bench/lib/query-corpus.js:
 * BENCH_QUERY_DOCS private documents, default 500, uploaded through the API; one question, top_k 5).
 * The floor (bench/lib/query-floor.js) runs the statements of one query through `pg` directly,
 * using the built QuotaService and Bm25Retriever over a bare pg.Pool of DATABASE_POOL_SIZE
 * connections (the service's pool, default 10): the credit spend, the retriever's plan, its ranking
 * rounds and the snippets, with the same organization, corpus and question. Both are driven closed
 * loop at BENCH_CONNECTIONS concurrent requests (default 50, as in `query`), BENCH_SECONDS each
 * (default 10), alternately (service first in odd runs, floor first in even ones), BENCH_RUNS times
 * (default 3); the ratio is taken within each run and reported as median (min–max).
 * The floor also reports, per query, how many statements of each kind it ran and the time inside them.
 *
 * Env: BENCH_QUERY_DOCS, BENCH_SECONDS, BENCH_RUNS, BENCH_CONNECTIONS, DATABASE_POOL_SIZE.
 */
import pg from 'pg';
import { prepareQueryCorpus, QUERY_BODY } from '../lib/query-corpus.js';
import { createQueryFloor } from '../lib/query-floor.js';
import { benchSeconds, runCount, showSpread, spread } from '../lib/stats.js';

export const description =
  'POST /v1/query/ req/s as a ratio of its own SQL (spend + retriever) run through pg at the same concurrency (3 runs)';

const TARGET = 0.8;

async function principalOf(databaseUrl, keyId) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT id, user_id, organization_id, key_prefix FROM api_keys WHERE id = $1', [
      keyId,
    ]);
    if (rows.length !== 1) throw new Error(`no api key ${keyId}`);
    const [key] = rows;
    return {
      kind: 'api_key',
      userId: key.user_id,
      organizationId: key.organization_id,
      role: 'owner',
      isAdmin: false,
      apiKeyId: key.id,
      keyPrefix: key.key_prefix,
    };
  } finally {
    await client.end();
  }
}

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = benchSeconds(ctx, ctx.log);
  const runs = runCount();
  const connections = ctx.seconds('BENCH_CONNECTIONS', 50);
  const poolSize = ctx.seconds('DATABASE_POOL_SIZE', 10);
  const documents = ctx.seconds('BENCH_QUERY_DOCS', 500);
  const { key, headers, probe } = await prepareQueryCorpus(ctx, documents, 'query floor bench');
  const floor = await createQueryFloor({
    databaseUrl: ctx.database.url,
    poolSize,
    principal: await principalOf(ctx.database.url, key.id),
    question: QUERY_BODY,
  });
  try {
    // The floor must find what the service finds, or it is not the same work.
    const floorSources = (await floor.one()).map((source) => source.chunkId);
    const serviceSources = probe.sources.map((source) => source.chunk_id);
    if (floorSources.join() !== serviceSources.join())
      throw new Error(`floor found ${floorSources} but the service ${serviceSources}`);

    const service = () =>
      ctx.cannon({
        url: `${baseUrl}/v1/query/`,
        method: 'POST',
        body: QUERY_BODY,
        headers,
        connections,
        duration: seconds,
      });
    const direct = () => floor.measure({ concurrency: connections, seconds });
    ctx.log('warm-up (3 s each)');
    await ctx.cannon({
      url: `${baseUrl}/v1/query/`,
      method: 'POST',
      body: QUERY_BODY,
      headers,
      connections,
      duration: 3,
    });
    await floor.measure({ concurrency: connections, seconds: 3 });

    const measured = { service: [], floor: [] };
    for (let r = 1; r <= runs; r++) {
      ctx.log(`run ${r}/${runs}: ${connections} concurrent, ${seconds} s each`);
      const order = r % 2 ? ['service', 'floor'] : ['floor', 'service'];
      for (const which of order) measured[which].push(await (which === 'service' ? service() : direct()));
      const [s, f] = [measured.service.at(-1), measured.floor.at(-1)];
      if (s.non2xx + s.errors > 0)
        throw new Error(`service run ${r}: ${s.non2xx} non-2xx, ${s.errors} errors ${JSON.stringify(s.statusCodes)}`);
      if (f.errors > 0) throw new Error(`floor run ${r}: ${f.errors} errors`);
    }
    const ratio = spread(measured.service.map((s, i) => s.requestsPerSecond / measured.floor[i].requestsPerSecond));
    const rps = (which) =>
      spread(
        measured[which].map((result) => result.requestsPerSecond),
        0,
      );
    const p99 = (which) =>
      spread(
        measured[which].map((result) => result.latencyMs.p99),
        1,
      );
    ctx.table(
      `query-floor: ${documents} private documents, ${connections} concurrent, ${seconds} s each, ${runs} runs: median (min–max)`,
      [
        {
          what: "floor: the query's SQL through pg (spend + retriever)",
          'req/s': showSpread(rps('floor'), 0),
          'p99 ms': showSpread(p99('floor'), 1),
          'of floor': '1.00',
          'req/s per run': rps('floor').values.join(' / '),
        },
        {
          what: 'POST /v1/query/ (X-API-Key)',
          'req/s': showSpread(rps('service'), 0),
          'p99 ms': showSpread(p99('service'), 1),
          'of floor': showSpread(ratio),
          'req/s per run': rps('service').values.join(' / '),
        },
      ],
    );
    const breakdown = measured.floor.at(-1).perQuery;
    ctx.table(
      `query-floor: the floor's statements per query (last run; ms inside the statement, pool of ${poolSize})`,
      Object.entries(breakdown).map(([kind, figures]) => ({
        statement: kind,
        'per query': figures.statements,
        'ms per query': figures.ms,
      })),
    );
    const met = ratio.median >= TARGET;
    ctx.log(
      `service / floor: ${showSpread(ratio)} (target >= ${TARGET}: ${met ? (ratio.min >= TARGET ? 'met' : 'met (not every run)') : 'MISSED'})`,
    );
    return {
      documents,
      seconds,
      runs,
      connections,
      poolSize,
      question: QUERY_BODY,
      ratio,
      target: TARGET,
      met,
      service: measured.service,
      floor: measured.floor,
    };
  } finally {
    await floor.close();
  }
}
