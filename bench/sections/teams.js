/**
 * Issue 22's figures (Teams), in one run.
 *
 * 1. What the role check costs. The service as it was before teams landed (TEAMS_BEFORE, default
 *    4f9dff0, main before that round) is built from a temporary git worktree (`git worktree add
 *    --detach`, this checkout's node_modules linked in when every package of its lockfile is here at the
 *    same version, `tsc -p tsconfig.build.json`; the worktree is removed at the end) and started beside
 *    the current build. Each runs on a fresh database of its own holding the same data: one user, one
 *    API key, TEAMS_DOCS (default 50) private documents. Then, for GET /auth/users/me/ with the JWT and
 *    with the API key, for POST /v1/query/ with the API key, and for POST /v1/query/ with an empty body
 *    (400 from validation, after authentication and the guards: their cost without the handler's), autocannon (BENCH_CONNECTIONS, default
 *    50, BENCH_SECONDS, default 10) measures before and now back to back, TEAMS_ROUNDS times (default 3),
 *    the order flipped every round (before-now, now-before, ...) so that a drifting machine falls on
 *    both alike. Reported: requests/s and p50/p99 of each, and the ratios now/before taken within each
 *    round, median (min–max) over the rounds. Without git history (a tarball, a shallow clone lacking
 *    the commit) this part is skipped with a message.
 *
 * 2. A removal reaching a second instance. Instances A and B of the current build on one fresh database,
 *    with the same JWT secret. An owner on A; TEAMS_REMOVALS times (default 100): a new user joins the owner's
 *    organization as a `member` (invitation, accept, switch), makes an API key there, and B answers 200
 *    to both its token and its key on GET /auth/users/me/ (so B has them cached); then the owner removes
 *    the member on A and B is polled every 5 ms with both until the token answers 401 and the key 401 or
 *    403. Measured from the moment the DELETE was sent (and, for reference, from its 204): p50, p99, max
 *    of the slower of the two per try. Target: p99 < 1 s.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from '../lib/load.js';
import { prepareQueryCorpus, QUERY_BODY } from '../lib/query-corpus.js';
import { benchSeconds, showSpread, spread } from '../lib/stats.js';

export const description =
  'issue 22: role check cost (now vs the build before teams, same run, me JWT/key and query) and removal propagation to a 2nd instance (p99 of 100)';
export const explicitOnly = true;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MEMBERS = '/v1/organizations/current/members/';
const PROPAGATION_TARGET_MS = 1000;
const POLL_MS = 5;
const POLL_LIMIT_MS = 5000;

export async function run(ctx) {
  const before = process.env.TEAMS_BEFORE ?? '4f9dff0';
  const roleCheck = await measureRoleCheck(ctx, before);
  const propagation = await measurePropagation(ctx);
  return { roleCheck, propagation };
}

// ---------------------------------------------------------------------------------------------------
// 1. The role check: now vs before, same run

function git(args, cwd = ROOT) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1e8 });
}

/** Why the earlier revision cannot be built here, or null when it can. */
function unavailable(before) {
  try {
    git(['rev-parse', '--verify', '--quiet', `${before}^{commit}`]);
  } catch {
    return `no git history holding ${before} here (a tarball or a shallow clone)`;
  }
  const old = JSON.parse(git(['show', `${before}:package-lock.json`])).packages;
  const now = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages;
  const differ = Object.keys(old).filter((name) => name !== '' && now[name]?.version !== old[name].version);
  if (differ.length > 0)
    return `${before}'s lockfile needs other package versions than node_modules holds (${differ.slice(0, 3).join(', ')}…)`;
  return null;
}

/** Builds `before` in a temporary worktree: `{ main, remove() }`. */
function buildBefore(ctx, before) {
  const directory = mkdtempSync(join(os.tmpdir(), 'kqs-before-'));
  const tree = join(directory, 'tree');
  const remove = () => {
    try {
      git(['worktree', 'remove', '--force', tree]);
    } catch (error) {
      ctx.log(`git worktree remove ${tree}: ${error.message.split('\n')[0]}`);
    }
    rmSync(directory, { recursive: true, force: true });
    try {
      git(['worktree', 'prune']);
    } catch {
      // nothing to prune
    }
  };
  try {
    git(['worktree', 'add', '--detach', tree, before]);
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    const started = Date.now();
    execFileSync(process.execPath, [join(tree, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: tree,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    ctx.log(`built ${before} in ${tree} (${Math.round((Date.now() - started) / 1000)} s)`);
    return { main: join(tree, 'dist/main.js'), remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** A service on a fresh database of its own with the same data as the other: user, key, documents. */
async function instanceWithData(ctx, label, documents, main) {
  const database = await ctx.createDatabase();
  const service = await ctx.startService({ databaseUrl: database.url, main });
  const { user, headers, probe } = await prepareQueryCorpus(
    {
      ...ctx,
      service,
      database,
      signUp: () => ctx.signUp(service.baseUrl),
      createKey: (user, name) => ctx.createKey(user, name, service.baseUrl),
      log: (message) => ctx.log(`${label}: ${message}`),
    },
    documents,
    `teams bench (${label})`,
  );
  return { label, service, user, headers, sources: probe.sources.length };
}

async function measureRoleCheck(ctx, before) {
  const reason = unavailable(before);
  if (reason) {
    ctx.log(`teams: role check skipped: ${reason}`);
    return { skipped: reason };
  }
  const seconds = benchSeconds(ctx, ctx.log);
  const rounds = ctx.seconds('TEAMS_ROUNDS', 3);
  const connections = ctx.seconds('BENCH_CONNECTIONS', 50);
  const documents = ctx.seconds('TEAMS_DOCS', 50);
  const commit = git(['rev-parse', '--short', `${before}^{commit}`]).trim();

  const build = buildBefore(ctx, before);
  try {
    const old = await instanceWithData(ctx, `before (${commit})`, documents, build.main);
    const now = await instanceWithData(ctx, 'now', documents, undefined);
    if (old.sources !== now.sources)
      throw new Error(`the query found ${old.sources} sources before and ${now.sources} now: not the same work`);
    const routes = [
      { name: 'meJwt', label: 'GET /auth/users/me/ (JWT)', path: '/auth/users/me/', auth: (i) => i.user.auth },
      { name: 'meKey', label: 'GET /auth/users/me/ (X-API-Key)', path: '/auth/users/me/', auth: (i) => i.headers },
      {
        name: 'query',
        label: 'POST /v1/query/ (X-API-Key)',
        path: '/v1/query/',
        method: 'POST',
        body: QUERY_BODY,
        auth: (i) => i.headers,
      },
      // Authentication, the role, the scope and the rate limit, then the body's validation refuses it:
      // the guards' work alone, without the handler (whose answers changed with teams: `me` lists organizations).
      {
        name: 'guardsOnly',
        label: 'POST /v1/query/ {} → 400 (X-API-Key)',
        path: '/v1/query/',
        method: 'POST',
        body: {},
        status: 400,
        auth: (i) => i.headers,
      },
    ];
    const load = (instance, route, duration) =>
      ctx.cannon({
        url: `${instance.service.baseUrl}${route.path}`,
        method: route.method ?? 'GET',
        body: route.body,
        headers: route.auth(instance),
        connections,
        duration,
      });

    for (const instance of [old, now])
      for (const route of routes) {
        const response = await ctx.call(instance.service.baseUrl, route.method ?? 'GET', route.path, {
          body: route.body,
          headers: route.auth(instance),
        });
        if (response.status !== (route.status ?? 200))
          throw new Error(`${instance.label} ${route.label} answered ${response.status}`);
      }
    ctx.log(`warm-up: 3 s per route and build`);
    for (const route of routes) for (const instance of [old, now]) await load(instance, route, 3);

    const measured = Object.fromEntries(routes.map((route) => [route.name, { before: [], now: [] }]));
    for (let r = 1; r <= rounds; r++) {
      const order = r % 2 === 1 ? [old, now] : [now, old];
      ctx.log(`round ${r}/${rounds}: ${order.map((i) => i.label).join(' then ')}, ${seconds} s each, per route`);
      for (const route of routes)
        for (const instance of order) {
          const result = await load(instance, route, seconds);
          const other = Object.entries(result.statusCodes)
            .filter(([status]) => Number(status) !== (route.status ?? 200))
            .reduce((n, [, { count }]) => n + count, 0);
          if (other + result.errors > 0)
            throw new Error(
              `${instance.label} ${route.label}, round ${r}: ${other} other statuses, ${result.errors} errors ${JSON.stringify(result.statusCodes)}`,
            );
          measured[route.name][instance === old ? 'before' : 'now'].push(result);
        }
    }

    const ratio = (name, pick) =>
      spread(measured[name].now.map((result, i) => pick(result) / pick(measured[name].before[i])));
    const figures = Object.fromEntries(
      routes.map((route) => {
        const { before: b, now: n } = measured[route.name];
        return [
          route.name,
          {
            route: route.label,
            before: {
              requestsPerSecond: spread(
                b.map((x) => x.requestsPerSecond),
                0,
              ),
              p50Ms: spread(b.map((x) => x.latencyMs.p50)),
              p99Ms: spread(b.map((x) => x.latencyMs.p99)),
            },
            now: {
              requestsPerSecond: spread(
                n.map((x) => x.requestsPerSecond),
                0,
              ),
              p50Ms: spread(n.map((x) => x.latencyMs.p50)),
              p99Ms: spread(n.map((x) => x.latencyMs.p99)),
            },
            ratios: {
              requestsPerSecond: ratio(route.name, (x) => x.requestsPerSecond),
              p50: ratio(route.name, (x) => x.latencyMs.p50),
              p99: ratio(route.name, (x) => x.latencyMs.p99),
            },
            runs: measured[route.name],
          },
        ];
      }),
    );
    ctx.table(
      `teams: role check, now vs before (${commit}), ${connections} connections, ${seconds} s per measurement, ${rounds} rounds: median (min–max)`,
      routes.flatMap((route) =>
        ['before', 'now'].map((which) => ({
          route: route.label,
          build: which === 'before' ? `before (${commit})` : 'now',
          'req/s': showSpread(figures[route.name][which].requestsPerSecond, 0),
          'p50 ms': showSpread(figures[route.name][which].p50Ms, 1),
          'p99 ms': showSpread(figures[route.name][which].p99Ms, 1),
          'req/s per round': figures[route.name][which].requestsPerSecond.values.join(' / '),
        })),
      ),
    );
    ctx.table(
      'teams: now / before, taken within each round: median (min–max)',
      routes.map((route) => ({
        route: route.label,
        'req/s now/before': showSpread(figures[route.name].ratios.requestsPerSecond),
        'p50 now/before': showSpread(figures[route.name].ratios.p50),
        'p99 now/before': showSpread(figures[route.name].ratios.p99),
        'req/s ratio per round': figures[route.name].ratios.requestsPerSecond.values.join(' / '),
      })),
    );
    return { before: commit, seconds, rounds, connections, documents, sources: now.sources, routes: figures };
  } finally {
    build.remove();
  }
}

// ---------------------------------------------------------------------------------------------------
// 2. A removal reaching a second instance

async function expect(promise, status, what) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new user who joins the organization `owner` acts in as a `member`, signed in there, with a key made there. */
async function addMember(ctx, baseUrl, owner) {
  const user = await ctx.signUp(baseUrl);
  const { token } = await expect(
    ctx.call(baseUrl, 'POST', '/v1/organizations/current/invitations/', {
      body: { email: user.email, role: 'member' },
      headers: owner.auth,
    }),
    201,
    'invite',
  );
  const accepted = await expect(
    ctx.call(baseUrl, 'POST', '/v1/invitations/accept/', { body: { token }, headers: user.auth }),
    200,
    'accept',
  );
  const switched = await expect(
    ctx.call(baseUrl, 'POST', '/auth/jwt/switch/', {
      body: { organization_id: accepted.organization_id },
      headers: user.auth,
    }),
    200,
    'switch',
  );
  const member = { ...user, auth: { Authorization: `Bearer ${switched.access}` } };
  const me = await expect(ctx.call(baseUrl, 'GET', '/auth/users/me/', { headers: member.auth }), 200, 'me');
  if (me.organization_id !== accepted.organization_id || me.role !== 'member')
    throw new Error(`the switched token acts in ${me.organization_id} as ${me.role}`);
  const key = await ctx.createKey(member, 'teams propagation', baseUrl);
  return { ...member, id: me.id, key: { 'X-API-Key': key.key } };
}

async function measurePropagation(ctx) {
  const tries = ctx.seconds('TEAMS_REMOVALS', 100);
  // Two instances of this build on one fresh database, signing tokens with the same secret (as a deployment's do).
  const database = await ctx.createDatabase();
  // Every try ends in refused credentials polled from one address: the failed-authentication limit
  // (60 a minute by default) would answer 429 after 30 tries.
  const env = { JWT_SECRET: randomBytes(48).toString('base64url'), FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000' };
  const a = await ctx.startService({ databaseUrl: database.url, env });
  const b = await ctx.startService({ databaseUrl: database.url, env });
  const owner = await ctx.signUp(a.baseUrl);
  // Both instances listen for membership changes before the first try.
  await sleep(500);
  ctx.log(`propagation: ${tries} removals on A (${a.baseUrl}), polling B (${b.baseUrl}) every ${POLL_MS} ms`);
  const fromSent = [];
  const fromAnswer = [];
  const tokenMs = [];
  const keyMs = [];
  const deleteMs = [];
  const keyStatuses = {};
  for (let i = 0; i < tries; i++) {
    const member = await addMember(ctx, a.baseUrl, owner);
    const byToken = () => ctx.call(b.baseUrl, 'GET', '/auth/users/me/', { headers: member.auth });
    const byKey = () => ctx.call(b.baseUrl, 'GET', '/auth/users/me/', { headers: member.key });
    await expect(byToken(), 200, `try ${i}: B, the member's token before the removal`);
    await expect(byKey(), 200, `try ${i}: B, the member's key before the removal`);

    const sent = performance.now();
    await expect(
      ctx.call(a.baseUrl, 'DELETE', `${MEMBERS}${member.id}/`, { headers: owner.auth }),
      204,
      `try ${i}: remove`,
    );
    const answered = performance.now();
    let tokenAt = null;
    let keyAt = null;
    while ((tokenAt === null || keyAt === null) && performance.now() - sent < POLL_LIMIT_MS) {
      const [token, key] = await Promise.all([tokenAt === null ? byToken() : null, keyAt === null ? byKey() : null]);
      const now = performance.now();
      if (token?.status === 401) tokenAt = now;
      if (key && (key.status === 401 || key.status === 403)) {
        keyAt = now;
        keyStatuses[key.status] = (keyStatuses[key.status] ?? 0) + 1;
      }
      if (tokenAt === null || keyAt === null) await sleep(POLL_MS);
    }
    if (tokenAt === null || keyAt === null)
      throw new Error(
        `try ${i}: B still accepted the removed member's ${tokenAt === null ? 'token' : 'key'} after ${POLL_LIMIT_MS} ms`,
      );
    const both = Math.max(tokenAt, keyAt);
    fromSent.push(both - sent);
    fromAnswer.push(Math.max(0, both - answered));
    tokenMs.push(tokenAt - sent);
    keyMs.push(keyAt - sent);
    deleteMs.push(answered - sent);
  }
  const figures = {
    tries,
    pollMs: POLL_MS,
    targetP99Ms: PROPAGATION_TARGET_MS,
    fromDeleteSentMs: summarize(fromSent),
    fromDeleteAnsweredMs: summarize(fromAnswer),
    tokenFromSentMs: summarize(tokenMs),
    keyFromSentMs: summarize(keyMs),
    deleteRequestMs: summarize(deleteMs),
    keyStatuses,
  };
  const row = (what, s) => ({ what, tries: s.count, 'p50 ms': s.p50, 'p99 ms': s.p99, 'max ms': s.max });
  ctx.table(
    `teams: a removal on A reaching B (${tries} tries, B polled every ${POLL_MS} ms; target p99 < ${PROPAGATION_TARGET_MS} ms)`,
    [
      row('token 401 and key refused, from DELETE sent', figures.fromDeleteSentMs),
      row('the same, from its 204', figures.fromDeleteAnsweredMs),
      row('token 401, from DELETE sent', figures.tokenFromSentMs),
      row('key refused, from DELETE sent', figures.keyFromSentMs),
      row('the DELETE itself (on A)', figures.deleteRequestMs),
    ],
  );
  const met = figures.fromDeleteSentMs.p99 < PROPAGATION_TARGET_MS;
  ctx.log(
    `propagation p99 ${figures.fromDeleteSentMs.p99} ms from DELETE sent (${met ? 'met' : 'MISSED'}); key answers ${JSON.stringify(keyStatuses)}`,
  );
  return { ...figures, met };
}
