/**
 * The service against bare Node, in the same run (issue 9, "Floors in the same run").
 *
 * Beside the service, two floor servers start as child processes (bench/floors/server.js): bare
 * `node:http` and bare Fastify, each answering GET /health/ with the service's `{status, timestamp}`.
 * Saturation, autocannon at 50 connections for BENCH_SECONDS (default 10) per route, over five routes:
 * bare node:http, bare Fastify, our GET /health/, and GET /auth/users/me/ with an API key and with a JWT.
 * The five are measured BENCH_RUNS times (default 3), one after another within each run (each run
 * starting one route further on), and every route is reported as requests/s and as a ratio of the
 * bare node:http figure of the same run: median and spread (min–max) over the runs.
 * Targets: /health/ >= 0.6 x node:http; key and JWT `me` >= 0.5 x node:http and >= 0.85 x /health/.
 *
 * Then API-key GET /auth/users/me/ at a fixed 1,000 requests/s, evenly paced, open loop
 * (bench/lib/load.js `paced`), BENCH_RUNS runs of BENCH_SECONDS each: p99 < 5 ms in every run. One
 * autocannon `overallRate` run is kept for reference (it releases each second's quota in a burst).
 *
 * Env: BENCH_SECONDS (default 10; shorter only to check the code), BENCH_RUNS (default 3),
 *      BENCH_CONNECTIONS (default 50).
 */
import { startFloor } from '../lib/floors.js';
import { benchSeconds, runCount, showSpread, spread } from '../lib/stats.js';

export const description =
  'bare node:http and Fastify floors vs /health/ and API-key/JWT `me` (3 runs), API-key p99 at 1,000 req/s (3 runs)';

const TARGETS = { healthToNode: 0.6, meToNode: 0.5, meToHealth: 0.85 };
const P99_TARGET_MS = 5;
const RATE = 1000;

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = benchSeconds(ctx, ctx.log);
  const runs = runCount();
  const connections = ctx.seconds('BENCH_CONNECTIONS', 50);
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'core bench');
  const apiKey = { 'X-API-Key': key.key };

  const floors = [];
  try {
    floors.push(await startFloor('node'), await startFloor('fastify'));
    const [node, fastify] = floors;
    const routes = [
      { name: 'node', label: 'bare node:http GET /health/', baseUrl: node.baseUrl, path: '/health/', headers: {} },
      { name: 'fastify', label: 'bare Fastify GET /health/', baseUrl: fastify.baseUrl, path: '/health/', headers: {} },
      { name: 'health', label: 'our GET /health/', baseUrl, path: '/health/', headers: {} },
      {
        name: 'apiKey',
        label: 'our GET /auth/users/me/ (X-API-Key)',
        baseUrl,
        path: '/auth/users/me/',
        headers: apiKey,
      },
      { name: 'jwt', label: 'our GET /auth/users/me/ (JWT)', baseUrl, path: '/auth/users/me/', headers: user.auth },
    ];

    // Check each route once before measuring, so a 401 or a different answer cannot pass for throughput.
    for (const route of routes) {
      const response = await ctx.call(route.baseUrl, 'GET', route.path, { headers: route.headers });
      if (response.status !== 200) throw new Error(`${route.label} answered ${response.status}`);
      if (
        route.path === '/health/' &&
        (response.body?.status !== 'ok' || !/\+00:00$/.test(response.body?.timestamp ?? ''))
      ) {
        throw new Error(`${route.label} answered ${JSON.stringify(response.body)}, not {status: "ok", timestamp}`);
      }
    }

    ctx.log(`warm-up (3 s per route, ${routes.length} routes)`);
    for (const route of routes)
      await ctx.cannon({ url: `${route.baseUrl}${route.path}`, headers: route.headers, connections, duration: 3 });

    const measured = Object.fromEntries(routes.map((route) => [route.name, []]));
    for (let r = 1; r <= runs; r++) {
      ctx.log(`saturation run ${r}/${runs}: ${connections} connections, ${seconds} s per route`);
      // Each run starts one route further on, so no route always follows the same one.
      const shift = (r - 1) % routes.length;
      for (const route of [...routes.slice(shift), ...routes.slice(0, shift)]) {
        const result = await ctx.cannon({
          url: `${route.baseUrl}${route.path}`,
          headers: route.headers,
          connections,
          duration: seconds,
        });
        if (result.non2xx + result.errors > 0)
          throw new Error(
            `${route.label}, run ${r}: ${result.non2xx} non-2xx, ${result.errors} errors ${JSON.stringify(result.statusCodes)}`,
          );
        measured[route.name].push(result);
      }
    }
    const rssMb = { service: ctx.service.rssMb(), node: node.rssMb(), fastify: fastify.rssMb() };

    // Ratios are taken within a run (each route against that run's node:http), then summarised.
    const perRun = (name, over) =>
      measured[name].map((result, i) => result.requestsPerSecond / measured[over][i].requestsPerSecond);
    const saturation = Object.fromEntries(
      routes.map((route) => [
        route.name,
        {
          requestsPerSecond: spread(
            measured[route.name].map((result) => result.requestsPerSecond),
            0,
          ),
          ofNode: spread(perRun(route.name, 'node')),
          p99Ms: spread(measured[route.name].map((result) => result.latencyMs.p99)),
          runs: measured[route.name],
        },
      ]),
    );
    const ratios = {
      healthToNode: spread(perRun('health', 'node')),
      apiKeyToNode: spread(perRun('apiKey', 'node')),
      jwtToNode: spread(perRun('jwt', 'node')),
      apiKeyToHealth: spread(perRun('apiKey', 'health')),
      jwtToHealth: spread(perRun('jwt', 'health')),
    };
    const checks = [
      ['our /health/ / node:http', ratios.healthToNode, TARGETS.healthToNode],
      ['API-key me / node:http', ratios.apiKeyToNode, TARGETS.meToNode],
      ['JWT me / node:http', ratios.jwtToNode, TARGETS.meToNode],
      ['API-key me / our /health/', ratios.apiKeyToHealth, TARGETS.meToHealth],
      ['JWT me / our /health/', ratios.jwtToHealth, TARGETS.meToHealth],
    ].map(([ratio, figure, target]) => ({
      ratio,
      'median (min–max)': showSpread(figure),
      target: `>= ${target}`,
      verdict: verdict(figure.median >= target, figure.min >= target),
    }));

    ctx.table(
      `core: saturation, ${connections} connections, ${seconds} s per route, ${runs} runs: median (min–max)`,
      routes.map((route) => ({
        route: route.label,
        'req/s': showSpread(saturation[route.name].requestsPerSecond, 0),
        'of node:http': showSpread(saturation[route.name].ofNode),
        'p99 ms': showSpread(saturation[route.name].p99Ms, 1),
        'req/s per run': saturation[route.name].requestsPerSecond.values.join(' / '),
      })),
    );
    ctx.table('core: targets (ratios taken within each run)', checks);

    // Fixed rate: BENCH_RUNS evenly paced open-loop runs, each must keep p99 under the target.
    const paced = [];
    for (let r = 1; r <= runs; r++) {
      ctx.log(`fixed rate run ${r}/${runs}: evenly paced ${RATE}/s open loop, ${seconds} s`);
      paced.push(
        await ctx.paced({
          baseUrl,
          rate: RATE,
          durationSeconds: seconds,
          next: () => ({ path: '/auth/users/me/', headers: apiKey }),
        }),
      );
    }
    ctx.log(`fixed rate, reference: autocannon overallRate ${RATE}, 10 connections, ${seconds} s`);
    const burst = await ctx.cannon({
      url: `${baseUrl}/auth/users/me/`,
      headers: apiKey,
      connections: 10,
      duration: seconds,
      overallRate: RATE,
    });
    const pacedFailures = (result) =>
      result.errors +
      Object.entries(result.statuses)
        .filter(([status]) => status !== '200')
        .reduce((n, [, count]) => n + count, 0);
    ctx.table(
      `core: API-key GET /auth/users/me/ at ${RATE} req/s, ${seconds} s per run (target p99 < ${P99_TARGET_MS} ms in each run)`,
      [
        ...paced.map((result, i) => ({
          run: `paced open loop, run ${i + 1}`,
          requests: result.latencyMs.count,
          'p50 ms': result.latencyMs.p50,
          'p99 ms': result.latencyMs.p99,
          'max ms': result.latencyMs.max,
          'non-200+err': pacedFailures(result),
          verdict: result.latencyMs.p99 < P99_TARGET_MS ? 'met' : 'MISSED',
        })),
        {
          run: 'autocannon overallRate (reference)',
          requests: burst.totalRequests,
          'p50 ms': burst.latencyMs.p50,
          'p99 ms': burst.latencyMs.p99,
          'max ms': burst.latencyMs.max,
          'non-200+err': burst.non2xx + burst.errors,
          verdict: '',
        },
      ],
    );
    const pacedP99 = paced.map((result) => result.latencyMs.p99);
    ctx.log(
      `of node:http (median): fastify ${saturation.fastify.ofNode.median}, /health/ ${ratios.healthToNode.median}, key ${ratios.apiKeyToNode.median}, jwt ${ratios.jwtToNode.median}; ` +
        `paced p99 per run ${pacedP99.join(' / ')} ms (${verdict(
          pacedP99.every((p99) => p99 < P99_TARGET_MS),
          true,
        )})`,
    );
    if (paced.some((result) => pacedFailures(result) > 0))
      throw new Error(
        `paced runs had non-200 answers or errors: ${JSON.stringify(paced.map((result) => result.statuses))}`,
      );
    return {
      seconds,
      runs,
      connections,
      saturation,
      ratios,
      targets: TARGETS,
      checks,
      fixedRate: {
        rate: RATE,
        targetP99Ms: P99_TARGET_MS,
        paced,
        pacedP99Ms: pacedP99,
        met: pacedP99.every((p99) => p99 < P99_TARGET_MS),
        autocannonReference: burst,
      },
      rssMb,
    };
  } finally {
    for (const floor of floors) await floor.stop();
  }
}

/** `met` when the median meets the target; `met (not every run)` when some run fell short; else MISSED. */
function verdict(medianOk, everyRunOk) {
  if (!medianOk) return 'MISSED';
  return everyRunOk ? 'met' : 'met (not every run)';
}
