/**
 * Soak (issue 4): SOAK_SECONDS (default 300) of mixed traffic at a steady SOAK_RATE (default 100
 * requests/s, open loop): queries with API keys, key reads, key creation, rotation and revocation,
 * sign-ins, and one small-quota organization whose queries end in the intended 402. Reports the
 * answers by status (anything but 2xx, 402 and 429 is an error), p99 latency and the service's RSS
 * per SOAK_WINDOW_SECONDS (default 30) window: the first and last windows show drift or growth.
 * Runs a service of its own (generous credits) so other sections are not affected.
 */
export const description =
  'mixed traffic at a steady rate for SOAK_SECONDS (default 300): errors, p99 and RSS at start and end';
export const explicitOnly = true;

const WORDS = [
  'queue',
  'restart',
  'ingest',
  'worker',
  'backs',
  'latency',
  'index',
  'replica',
  'failover',
  'quota',
  'token',
  'billing',
  'region',
  'cache',
  'shard',
];
const phrase = (n) => Array.from({ length: n }, () => WORDS[Math.floor(Math.random() * WORDS.length)]).join(' ');

// Out of every 100 requests.
const MIX = [
  ['query', 44],
  ['me', 24],
  ['list keys', 8],
  ['create key', 6],
  ['rotate key', 5],
  ['revoke key', 4],
  ['sign-in', 3],
  ['query over quota', 6],
];

export async function run(ctx) {
  const seconds = ctx.seconds('SOAK_SECONDS', 300);
  const rate = ctx.seconds('SOAK_RATE', 100);
  const windowSeconds = ctx.seconds('SOAK_WINDOW_SECONDS', 30);
  const admin = { email: 'soak-admin@example.com', password: `soak-${Math.random().toString(36).slice(2)}-admin` };
  const service = await ctx.startService({
    env: {
      DEFAULT_MONTHLY_CREDITS: '100000000',
      RATE_LIMIT_PER_MINUTE: '1200',
      // Its users create keys faster than they revoke them, for minutes: an artefact of the mix.
      MAX_ACTIVE_KEYS_PER_ORG: '100000',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
    },
  });
  const { baseUrl } = service;

  ctx.log('soak: setting up 20 users, their documents and keys');
  const users = [];
  for (let i = 0; i < 20; i++) {
    const user = await ctx.signUp(baseUrl);
    user.queryKey = (await ctx.createKey(user, 'soak queries', baseUrl)).key;
    for (let d = 0; d < 5; d++) {
      const response = await ctx.call(baseUrl, 'POST', '/v1/documents/', {
        headers: user.auth,
        body: { title: `Runbook ${d}`, content: `${phrase(60)}. ${phrase(80)}. ${phrase(40)}.` },
      });
      if (response.status !== 201) throw new Error(`document upload answered ${response.status}`);
    }
    users.push(user);
  }
  // One organization with ten credits: its queries end in 402, the intended refusal.
  const poor = await ctx.signUp(baseUrl);
  poor.queryKey = (await ctx.createKey(poor, 'over quota', baseUrl)).key;
  const me = await ctx.call(baseUrl, 'GET', '/auth/users/me/', { headers: poor.auth });
  const adminTokens = await ctx.call(baseUrl, 'POST', '/auth/jwt/create/', { body: admin });
  const capped = await ctx.call(
    baseUrl,
    'PATCH',
    `/v1/billings/organizations/${me.body.organization_id}/subscription/`,
    {
      headers: { Authorization: `Bearer ${adminTokens.body.access}` },
      body: { monthly_credits: 10 },
    },
  );
  const quotaCapped = capped.status === 200;

  const schedule = MIX.flatMap(([op, weight]) => Array(weight).fill(op));
  const pick = (list) => list[Math.floor(Math.random() * list.length)];
  // Keys move through create -> rotate -> revoke, so each user's list stays bounded.
  const fresh = [];
  const rotated = [];
  const next = (i) => {
    let user = users[i % users.length];
    let op = schedule[(i * 37) % schedule.length];
    if (op === 'rotate key') {
      if (fresh.length === 0) op = 'create key';
      else user = fresh[0].user;
    }
    if (op === 'revoke key') {
      if (rotated.length === 0) op = 'me';
      else user = rotated[0].user;
    }
    switch (op) {
      case 'query':
        return {
          op,
          method: 'POST',
          path: '/v1/query/',
          headers: { 'X-API-Key': user.queryKey },
          body: { query: phrase(4) },
        };
      case 'query over quota':
        return {
          op,
          method: 'POST',
          path: '/v1/query/',
          headers: { 'X-API-Key': poor.queryKey },
          body: { query: phrase(3) },
        };
      case 'me':
        return { op, method: 'GET', path: '/auth/users/me/', headers: { Authorization: `Bearer ${user.queryKey}` } };
      case 'list keys':
        return { op, method: 'GET', path: '/v1/billings/api-keys/', headers: user.auth };
      case 'create key':
        return {
          op,
          user,
          method: 'POST',
          path: '/v1/billings/api-keys/',
          headers: user.auth,
          body: { name: `soak ${i}` },
          captureBody: true,
        };
      case 'rotate key':
        return {
          op,
          user,
          method: 'POST',
          path: `/v1/billings/api-keys/${fresh.shift().id}/rotate/`,
          headers: user.auth,
          captureBody: true,
        };
      case 'revoke key':
        return { op, method: 'POST', path: `/v1/billings/api-keys/${rotated.shift().id}/revoke/`, headers: user.auth };
      case 'sign-in': {
        const who = pick(users);
        return {
          op,
          user: who,
          method: 'POST',
          path: '/auth/jwt/create/',
          body: { email: who.email, password: who.password },
          captureBody: true,
        };
      }
      default:
        throw new Error(op);
    }
  };

  const windows = [];
  const windowOf = (elapsedMs) => {
    const index = Math.floor(elapsedMs / (windowSeconds * 1000));
    windows[index] ??= { latencies: [], statuses: {}, rssMb: null };
    return windows[index];
  };
  const byOp = {};
  const onResult = ({ status, latency, spec, elapsedMs, body }) => {
    const window = windowOf(elapsedMs);
    window.latencies.push(latency);
    const key = status === null ? 'network error' : String(status);
    window.statuses[key] = (window.statuses[key] ?? 0) + 1;
    byOp[spec.op] ??= {};
    byOp[spec.op][key] = (byOp[spec.op][key] ?? 0) + 1;
    if (spec.op === 'create key' && status === 201) fresh.push({ user: spec.user, id: body.id });
    if (spec.op === 'rotate key' && status === 201) rotated.push({ user: spec.user, id: body.id });
    if (spec.op === 'sign-in' && status === 200) spec.user.auth = { Authorization: `Bearer ${body.access}` };
  };
  const started = Date.now();
  const sampler = setInterval(
    () => {
      windowOf(Date.now() - started + 1).rssMb = service.rssMb();
    },
    windowSeconds * 1000 - 500,
  );
  const rssAtStart = service.rssMb();
  ctx.log(`soak: ${rate} requests/s for ${seconds} s (RSS at start ${rssAtStart} MB)`);
  let result;
  try {
    result = await ctx.paced({ baseUrl, rate, durationSeconds: seconds, next, onResult, maxSockets: 256 });
  } finally {
    clearInterval(sampler);
  }
  const rssAtEnd = service.rssMb();

  const { summarize } = await import('../lib/load.js');
  const rows = windows.map((window, i) => {
    const summary = summarize(window.latencies);
    return {
      window: `${i * windowSeconds}-${(i + 1) * windowSeconds} s`,
      requests: summary.count,
      'p50 ms': summary.p50,
      'p99 ms': summary.p99,
      'RSS MB': window.rssMb ?? '',
      statuses: Object.entries(window.statuses)
        .map(([s, n]) => `${s}:${n}`)
        .join(' '),
    };
  });
  ctx.table(`soak: ${rate} req/s for ${seconds} s, by ${windowSeconds} s window`, rows);
  const intended = new Set(['402', '429']);
  const errors =
    Object.entries(result.statuses)
      .filter(([status]) => !status.startsWith('2') && !intended.has(status))
      .reduce((sum, [, n]) => sum + n, 0) + result.errors;
  const first = rows[0];
  const last = rows[rows.length - 1];
  ctx.table(
    'soak: by operation',
    Object.entries(byOp).map(([op, statuses]) => ({
      op,
      statuses: Object.entries(statuses)
        .map(([s, n]) => `${s}:${n}`)
        .join(' '),
    })),
  );
  ctx.log(
    `soak: ${result.latencyMs.count} requests, errors ${errors} (402/429 intended: ${(result.statuses['402'] ?? 0) + (result.statuses['429'] ?? 0)}); ` +
      `p99 first window ${first['p99 ms']} ms, last ${last['p99 ms']} ms; RSS ${rssAtStart} MB -> ${rssAtEnd} MB` +
      (quotaCapped ? '' : ` (capping the small organization's quota answered ${capped.status})`),
  );
  await service.stop();
  return {
    seconds,
    rate,
    statuses: result.statuses,
    networkErrors: result.errors,
    errors,
    byOperation: byOp,
    windows: rows,
    rssMb: { start: rssAtStart, end: rssAtEnd },
    overall: result.latencyMs,
    quotaCapped,
  };
}
