/**
 * Partner keys (issue 10): a key's monthly_credit_limit is exact under a burst, inside the
 * organization's quota, and scopes and per-key limits cost no measurable throughput on the key path.
 *
 * 1. 200 concurrent queries through one key capped at 30, in an organization with 50 credits left:
 *    exactly 30 answers, 170 refusals with the key's 402.
 * 2. 200 concurrent queries through two keys capped at 30 each, 50 credits left: exactly 50 answers.
 * 3. Saturation throughput of a plain key against a scoped, rate-limited, capped key, on
 *    GET /auth/users/me/ (the key path of the core section) and GET /v1/documents/ (a route with a
 *    scope to check), alternating within each run.
 */
import { creditsUsed, setCredits } from '../lib/quota.js';
import { benchSeconds, runCount, showSpread, spread } from '../lib/stats.js';

export const description = 'key credit caps are exact under 200 concurrent queries; scoped keys cost no throughput';

const CONCURRENT = 200;
const CREDITS = 50;
const CAP = 30;

async function burst(ctx, keys) {
  const responses = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) =>
      ctx.call(ctx.service.baseUrl, 'POST', '/v1/query/', {
        body: { query: 'How much does a query cost?' },
        headers: { 'X-API-Key': keys[i % keys.length].key },
      }),
    ),
  );
  const statuses = {};
  const codes = {};
  for (const response of responses) {
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    if (response.status === 402) codes[response.body?.code] = (codes[response.body?.code] ?? 0) + 1;
  }
  return { statuses, codes };
}

async function partnerKey(ctx, user, settings) {
  const response = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/billings/api-keys/', {
    body: { name: 'partner bench', ...settings },
    headers: user.auth,
  });
  if (response.status !== 201) throw new Error(`key create answered ${response.status}`);
  return response.body;
}

async function capScenario(ctx, caps) {
  const user = await ctx.signUp();
  const document = { title: 'Quota handbook', content: 'Each query costs one credit from the monthly quota.' };
  const created = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/documents/', { body: document, headers: user.auth });
  if (created.status !== 201) throw new Error(`document upload answered ${created.status}`);
  const keys = [];
  for (const cap of caps) keys.push(await partnerKey(ctx, user, { monthly_credit_limit: cap }));
  await setCredits(ctx.database.url, user.email, CREDITS);
  const started = performance.now();
  const { statuses, codes } = await burst(ctx, keys);
  const elapsedMs = Math.round(performance.now() - started);
  const stored = await creditsUsed(ctx.database.url, user.email);
  const expected = Math.min(
    CREDITS,
    caps.reduce((sum, cap) => sum + cap, 0),
  );
  const exact =
    statuses[200] === expected &&
    statuses[402] === CONCURRENT - expected &&
    stored.creditsUsed === expected &&
    stored.ledgerLines === expected;
  return {
    keys: caps.length,
    caps: caps.join(' + '),
    'credits left': CREDITS,
    requests: CONCURRENT,
    'answered 200': statuses[200] ?? 0,
    'refused 402': statuses[402] ?? 0,
    '402 codes': Object.entries(codes)
      .map(([code, n]) => `${code} ${n}`)
      .join(', '),
    'credits_used stored': stored.creditsUsed,
    ms: elapsedMs,
    verdict: exact ? 'exact' : 'WRONG',
  };
}

export async function run(ctx) {
  const caps = [await capScenario(ctx, [CAP]), await capScenario(ctx, [CAP, CAP])];
  ctx.table('key-caps: 200 concurrent queries, 50 credits left in the organization', caps);

  const seconds = benchSeconds(ctx, ctx.log);
  const runs = runCount();
  const connections = ctx.seconds('BENCH_CONNECTIONS', 50);
  const user = await ctx.signUp();
  const plain = await ctx.createKey(user, 'plain bench');
  const scoped = await partnerKey(ctx, user, {
    scopes: ['query', 'documents:read'],
    rate_limit_per_minute: 1_000_000,
    monthly_credit_limit: CAP,
    metadata: { customer_id: 'bench', tier: 1 },
  });
  const targets = [];
  for (const path of ['/auth/users/me/', '/v1/documents/?limit=1'])
    for (const [name, key] of [
      ['plain', plain],
      ['scoped', scoped],
    ])
      targets.push({ name: `${name} ${path}`, path, headers: { 'X-API-Key': key.key } });
  for (const target of targets) {
    const response = await ctx.call(ctx.service.baseUrl, 'GET', target.path, { headers: target.headers });
    if (response.status !== 200) throw new Error(`${target.name} answered ${response.status}`);
    await ctx.cannon({
      url: `${ctx.service.baseUrl}${target.path}`,
      headers: target.headers,
      connections,
      duration: 2,
    });
  }
  const measured = Object.fromEntries(targets.map((target) => [target.name, []]));
  for (let r = 1; r <= runs; r++) {
    ctx.log(`key-caps throughput run ${r}/${runs}: ${connections} connections, ${seconds} s per target`);
    // Alternate which key goes first, so neither always follows the other.
    const order = r % 2 ? targets : [targets[1], targets[0], targets[3], targets[2]];
    for (const target of order) {
      const result = await ctx.cannon({
        url: `${ctx.service.baseUrl}${target.path}`,
        headers: target.headers,
        connections,
        duration: seconds,
      });
      if (result.non2xx + result.errors > 0)
        throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      measured[target.name].push(result.requestsPerSecond);
    }
  }
  const rows = ['/auth/users/me/', '/v1/documents/?limit=1'].map((path) => {
    const plainRps = measured[`plain ${path}`];
    const scopedRps = measured[`scoped ${path}`];
    return {
      route: `GET ${path}`,
      'plain key req/s': showSpread(spread(plainRps, 0), 0),
      'scoped capped key req/s': showSpread(spread(scopedRps, 0), 0),
      'scoped / plain (per run)': showSpread(spread(scopedRps.map((value, i) => value / plainRps[i]))),
    };
  });
  ctx.table('key-caps: throughput of a scoped, rate-limited, capped key against a plain key', rows);
  if (caps.some((row) => row.verdict !== 'exact')) throw new Error(`credit caps not exact: ${JSON.stringify(caps)}`);
  return { caps, throughput: { seconds, runs, connections, measured, rows } };
}
