/**
 * The floor of the framework against the two authenticated paths (issue 2, "Figures to reach"):
 * saturation throughput of GET /health/, and of GET /auth/users/me/ with an API key and with a JWT,
 * 50 connections for BENCH_SECONDS (default and minimum 10) each; then API-key latency at a fixed
 * 1,000 requests/s. Targets: both ratios auth/health >= 0.7, API-key p99 < 5 ms.
 */
export const description = 'requests/s of /health/ vs API-key and JWT GETs (50 conns), API-key p99 at 1,000 req/s';

const RATIO_TARGET = 0.7;
const P99_TARGET_MS = 5;
const RATE = 1000;

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const seconds = Math.max(10, ctx.seconds('BENCH_SECONDS', 10));
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'core bench');
  const apiKey = { 'X-API-Key': key.key };
  const me = `${baseUrl}/auth/users/me/`;

  // Check each credential once before measuring, so a 401 cannot pass for throughput.
  for (const headers of [apiKey, user.auth]) {
    const response = await ctx.call(baseUrl, 'GET', '/auth/users/me/', { headers });
    if (response.status !== 200) throw new Error(`GET /auth/users/me/ answered ${response.status}`);
  }

  ctx.log('warm-up (3 s per route)');
  for (const headers of [{}, apiKey, user.auth]) {
    await ctx.cannon({ url: headers === apiKey || headers === user.auth ? me : `${baseUrl}/health/`, headers, connections: 50, duration: 3 });
  }

  ctx.log(`saturation: 50 connections, ${seconds} s each`);
  const health = await ctx.cannon({ url: `${baseUrl}/health/`, connections: 50, duration: seconds });
  const viaKey = await ctx.cannon({ url: me, headers: apiKey, connections: 50, duration: seconds });
  const viaJwt = await ctx.cannon({ url: me, headers: user.auth, connections: 50, duration: seconds });
  const rssAfterSaturation = ctx.service.rssMb();

  // autocannon releases each connection's share of `overallRate` at the start of every second, so a
  // run with many connections is a burst at saturation, then idle: its latency is queueing. Ten
  // connections keep the burst shallow; the paced run below spreads requests evenly (1 per ms).
  ctx.log(`fixed rate: autocannon overallRate ${RATE}, 10 connections, ${seconds} s`);
  const fixed = await ctx.cannon({ url: me, headers: apiKey, connections: 10, duration: seconds, overallRate: RATE });
  ctx.log(`fixed rate: evenly paced ${RATE}/s open loop, ${seconds} s`);
  const evenly = await ctx.paced({
    baseUrl,
    rate: RATE,
    durationSeconds: seconds,
    next: () => ({ path: '/auth/users/me/', headers: apiKey }),
  });

  const ratio = (run) => Math.round((run.requestsPerSecond / health.requestsPerSecond) * 100) / 100;
  const result = {
    seconds,
    saturation: { health, apiKey: viaKey, jwt: viaJwt },
    ratios: { apiKeyToHealth: ratio(viaKey), jwtToHealth: ratio(viaJwt), target: RATIO_TARGET },
    fixedRate: { autocannon: fixed, paced: evenly, targetP99Ms: P99_TARGET_MS },
    rssMbAfterSaturation: rssAfterSaturation,
  };
  const failures = (run) => run.non2xx + run.errors;
  ctx.table(`core: saturation, 50 connections, ${seconds} s each`, [
    { route: 'GET /health/', 'req/s': health.requestsPerSecond, 'p50 ms': health.latencyMs.p50, 'p99 ms': health.latencyMs.p99, 'non-2xx+err': failures(health), 'ratio': '1.00' },
    { route: 'GET /auth/users/me/ (X-API-Key)', 'req/s': viaKey.requestsPerSecond, 'p50 ms': viaKey.latencyMs.p50, 'p99 ms': viaKey.latencyMs.p99, 'non-2xx+err': failures(viaKey), 'ratio': result.ratios.apiKeyToHealth.toFixed(2) },
    { route: 'GET /auth/users/me/ (JWT)', 'req/s': viaJwt.requestsPerSecond, 'p50 ms': viaJwt.latencyMs.p50, 'p99 ms': viaJwt.latencyMs.p99, 'non-2xx+err': failures(viaJwt), 'ratio': result.ratios.jwtToHealth.toFixed(2) },
  ]);
  ctx.table(`core: API-key GET at ${RATE} req/s, ${seconds} s (target p99 < ${P99_TARGET_MS} ms)`, [
    { generator: 'autocannon overallRate, 10 conns', 'req/s': fixed.requestsPerSecond, 'p50 ms': fixed.latencyMs.p50, 'p99 ms': fixed.latencyMs.p99, 'max ms': fixed.latencyMs.max, 'non-2xx+err': failures(fixed) },
    { generator: 'paced open loop', 'req/s': RATE, 'p50 ms': evenly.latencyMs.p50, 'p99 ms': evenly.latencyMs.p99, 'max ms': evenly.latencyMs.max, 'non-2xx+err': evenly.errors + Object.entries(evenly.statuses).filter(([s]) => s !== '200').reduce((n, [, c]) => n + c, 0) },
  ]);
  const verdict = (ok) => (ok ? 'met' : 'MISSED');
  ctx.log(
    `ratios api-key/health ${result.ratios.apiKeyToHealth} (${verdict(result.ratios.apiKeyToHealth >= RATIO_TARGET)}), ` +
      `jwt/health ${result.ratios.jwtToHealth} (${verdict(result.ratios.jwtToHealth >= RATIO_TARGET)}); ` +
      `p99 at ${RATE}/s: autocannon ${fixed.latencyMs.p99} ms, paced ${evenly.latencyMs.p99} ms (${verdict(Math.max(fixed.latencyMs.p99, evenly.latencyMs.p99) < P99_TARGET_MS)})`,
  );
  const bad = [health, viaKey, viaJwt, fixed].filter((run) => failures(run) > 0);
  if (bad.length > 0) throw new Error(`some runs had non-2xx answers or errors: ${JSON.stringify(bad.map((run) => run.statusCodes))}`);
  return result;
}
