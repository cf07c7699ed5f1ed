/**
 * Metadata filters (issue 19, item 2): what the costliest filters the limits allow cost, and whether one
 * tenant flooding them slows another tenant's reads.
 *
 * A: FILTERS_DOCS (default 1,000) private documents (bench/lib/query-corpus.js), uploaded in batches,
 * each with 20 metadata fields: 10 numbers and 5 short strings (categories), and 5 strings of 700
 * random characters, so that each document's metadata is about 4 KB and PostgreSQL stores it out of
 * line (TOAST), as the worst metadata the size limit lets through would be.
 *
 * 1. Cost: `POST /v1/search/` (top_k 10, one at a time) unfiltered and with each filter below, taken in
 *    turn for FILTERS_ROUNDS rounds (default 200, after 3 of warm-up) so that all see the same machine;
 *    p50/p95 per filter and its p95 as a ratio to the unfiltered p95 (target <= 1.5). Every filter
 *    matches every document, so a filtered search scores as many passages as the unfiltered one and
 *    the ratio is the filter's own cost. A filter whose answer takes over STALL_MS is dropped from the
 *    later rounds (one such answer is enough to know).
 * 2. Isolation (the noisy neighbour of issues 19 and 24): B, another organization with 50 documents,
 *    alternates `GET /v1/documents/?limit=1` and a plain `POST /v1/search/` at FILTERS_QUIET_RATE a
 *    second (default 20, open loop), in phases of FILTERS_SECONDS (default 10): alone, then while A
 *    floods the worst filter from FILTERS_FLOOD_CONNECTIONS (default 12) connections, FILTERS_CYCLES
 *    times (default 5: 500 requests per route on each side, so a p99 is the fifth worst, not the third
 *    of 3 cycles, which moved by half from run to run), then alone once more. A's load generator runs in a process of its own under
 *    `nice` (FILTERS_FLOOD_NICE, default 10). With FILTERS_FLOODERS (default 1) above 1, as many
 *    organizations flood at once, each with its own FILTERS_DOCS documents and a share of the
 *    connections (several heavy organizations rest as one, see SearchGate). With FILTERS_FLOOD_RATE (default 0: as
 *    fast as its connections go) A sends at most that many searches a second, all flooders together: at 2
 *    or 5, a neighbour whose database time is no more than B's own. With FILTERS_DATABASE_APART=1 a local
 *    PostgreSQL runs on the first CPU and the service on the others (see pinApart). B's p50/p95/p99 per route under the flood as ratios to
 *    its phases alone (target p99 <= 1.5 x), with the p99 of the same requests inside the service (their
 *    access-log durations, found by the X-Request-Id each carries), its statuses; A's answers (a 429/503 is a refusal, not a
 *    failure); and per phase, the cores the service, the database and the whole machine used, and the
 *    service's event loop delay. SearchGate's settings are the service's own: measure others with
 *    BENCH_SERVICE_ENV="SEARCHES_AT_ONCE=1".
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { cannonApart, ratioInterval, summarize } from '../lib/load.js';
import { cpuSeconds, mainThreadSchedule, pinApart } from '../lib/proc.js';
import { documentText, QUERY_BODY } from '../lib/query-corpus.js';
import { setCredits } from '../lib/quota.js';

export const description =
  'metadata filters: the worst filters the limits allow vs an unfiltered search (target p95 <= 1.5x); a tenant flooding them vs another reading';
export const explicitOnly = true;

const STALL_MS = 5_000;
const TARGET = 1.5;
const SHORT = ['s0', 's1', 's2', 's3', 's4'];
const LONG = ['t0', 't1', 't2', 't3', 't4'];
const NUMBERS = Array.from({ length: 10 }, (_, k) => `n${k}`);

function metadataOf(i) {
  return {
    ...Object.fromEntries(SHORT.map((key, k) => [key, `cat-${(i * (k + 1)) % 50}`])),
    ...Object.fromEntries(LONG.map((key) => [key, randomBytes(525).toString('base64')])),
    ...Object.fromEntries(NUMBERS.map((key, k) => [key, (i * (k + 3)) % 100])),
  };
}

const absentStrings = Array.from({ length: 100 }, (_, v) => `absent-${v}`);
const absentNumbers = Array.from({ length: 100 }, (_, v) => 1000 + v);
const everyCategory = Array.from({ length: 100 }, (_, v) => `cat-${v}`); // cat-0..cat-49 are the stored ones
const everyNumber = Array.from({ length: 100 }, (_, v) => v);
const fieldsOf = (keys, condition) => Object.fromEntries(keys.map((key) => [key, condition(key)]));
const ninAll = (keys) => fieldsOf(keys, (key) => ({ $nin: key.startsWith('n') ? absentNumbers : absentStrings }));

/** Each filter matches every document (see the header). */
const FILTERS = {
  none: undefined,
  '1 field $nin 100': ninAll(['s0']),
  '5 fields $nin 100': ninAll(SHORT),
  '20 fields $nin 100': ninAll([...SHORT, ...LONG, ...NUMBERS]),
  '20 fields $in 100 (15) / range (5)': {
    ...fieldsOf(SHORT, () => ({ $in: everyCategory })),
    ...fieldsOf(NUMBERS, () => ({ $in: everyNumber })),
    ...fieldsOf(LONG, () => ({ $gt: '' })),
  },
  '20 fields ranges': {
    ...fieldsOf([...SHORT, ...LONG], () => ({ $gt: '', $gte: '' })),
    ...fieldsOf(NUMBERS, () => ({ $gt: -1, $gte: 0, $lt: 1e9, $lte: 1e9 })),
  },
  '20 fields, every operator': {
    ...fieldsOf(SHORT, () => ({ $in: everyCategory, $nin: absentStrings, $gt: '', $gte: '', $ne: 'x', $exists: true })),
    ...fieldsOf(LONG, () => ({ $nin: absentStrings, $gt: '', $gte: '', $ne: 'x', $exists: true })),
    ...fieldsOf(NUMBERS, () => ({
      $in: everyNumber,
      $nin: absentNumbers,
      $gt: -1,
      $gte: 0,
      $lt: 1e9,
      $lte: 1e9,
      $ne: -5,
      $exists: true,
    })),
  },
};
const WORST = '20 fields, every operator';

async function upload(ctx, auth, documents, withMetadata) {
  for (let start = 0; start < documents; start += 100) {
    const batch = Array.from({ length: Math.min(100, documents - start) }, (_, j) => ({
      ...documentText(start + j),
      ...(withMetadata ? { metadata: metadataOf(start + j) } : {}),
    }));
    const response = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/documents/batch/', {
      body: { documents: batch },
      headers: auth,
    });
    if (response.status !== 201)
      throw new Error(`batch upload answered ${response.status} ${JSON.stringify(response.body)}`);
  }
}

async function tenant(ctx, documents, withMetadata) {
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'filters bench');
  await setCredits(ctx.database.url, user.email, 100_000_000);
  await upload(ctx, user.auth, documents, withMetadata);
  return { user, headers: { 'X-API-Key': key.key } };
}

async function timedSearch(ctx, headers, filter) {
  const started = performance.now();
  const response = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/search/', {
    body: { query: QUERY_BODY.query, top_k: 10, ...(filter ? { filter } : {}) },
    headers,
  });
  return { ms: performance.now() - started, status: response.status, results: response.body?.results?.length };
}

async function measureCost(ctx, headers) {
  const rounds = ctx.seconds('FILTERS_ROUNDS', 200);
  const names = Object.keys(FILTERS);
  const timings = Object.fromEntries(names.map((name) => [name, []]));
  const statuses = Object.fromEntries(names.map((name) => [name, {}]));
  const stalled = new Set();
  ctx.log(`cost: ${names.length} searches in turn, 3 warm-up rounds then ${rounds}`);
  for (let round = -3; round < rounds; round++) {
    for (const name of names) {
      if (stalled.has(name)) continue;
      const { ms, status, results } = await timedSearch(ctx, headers, FILTERS[name]);
      if (status === 200 && results !== 10) throw new Error(`${name}: ${results} results, expected 10`);
      if (ms > STALL_MS) stalled.add(name);
      if (round < 0 && !stalled.has(name)) continue;
      timings[name].push(ms);
      statuses[name][status] = (statuses[name][status] ?? 0) + 1;
    }
  }
  const summaries = Object.fromEntries(names.map((name) => [name, percentiles(timings[name])]));
  const base = summaries.none.p95;
  return names.map((name) => ({
    filter: name,
    searches: timings[name].length,
    'p50 ms': summaries[name].p50,
    'p95 ms': summaries[name].p95,
    'p95 / unfiltered p95': ratio(summaries[name].p95, base),
    statuses: JSON.stringify(statuses[name]),
    note: stalled.has(name) ? `stalled (> ${STALL_MS} ms), dropped` : '',
  }));
}

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => (sorted.length ? Math.round(sorted[Math.ceil((p / 100) * sorted.length) - 1] * 10) / 10 : null);
  return { p50: at(50), p95: at(95) };
}

const ratio = (value, base) => (value === null || !base ? null : Math.round((value / base) * 100) / 100);

/** B's searches and reads at a steady pace, alternating: its latencies by route, and its statuses. */
async function quietTraffic(ctx, headers, seconds, rate, phase) {
  const byRoute = Object.fromEntries(QUIET_ROUTES.map((route) => [route, []]));
  const ids = Object.fromEntries(QUIET_ROUTES.map((route) => [route, []]));
  const statuses = {};
  await ctx.paced({
    baseUrl: ctx.service.baseUrl,
    rate,
    durationSeconds: seconds,
    next: (i) => {
      // Tagged, so that the service's access log tells how long each of B's requests took inside it.
      const tagged = { ...headers, 'x-request-id': `quiet-${phase}-${i}` };
      return i % 2 === 0
        ? { label: QUIET_ROUTES[0], path: '/v1/documents/?limit=1', headers: tagged }
        : {
            label: QUIET_ROUTES[1],
            method: 'POST',
            path: '/v1/search/',
            headers: tagged,
            body: { query: QUERY_BODY.query, top_k: 5 },
          };
    },
    onResult: ({ spec, latency, status }) => {
      byRoute[spec.label].push(latency);
      ids[spec.label].push(spec.headers['x-request-id']);
      const key = `${spec.label} ${status ?? 'error'}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
    },
  });
  return { byRoute, ids, statuses };
}

/**
 * How long each tagged request took inside the service (`duration_ms` of its access-log line, by
 * request id): B's latency less what its client, the loopback and the kernel added. Empty without a log.
 */
async function serviceDurations(ctx) {
  const durations = new Map();
  if (!ctx.service.logFile) return durations;
  await new Promise((resolve) => setTimeout(resolve, 500)); // the last lines reach the file
  for (const line of readFileSync(ctx.service.logFile, 'utf8').split('\n')) {
    if (!line.includes('"request_id":"quiet-')) continue;
    try {
      const entry = JSON.parse(line);
      if (entry.duration_ms !== undefined) durations.set(entry.request_id, Number(entry.duration_ms));
    } catch {
      // not a JSON line
    }
  }
  return durations;
}

const QUIET_ROUTES = ['GET /v1/documents/?limit=1', 'POST /v1/search/'];
const QUIET_TARGET = 1.5;

/** Busy and total CPU time of the whole machine, in clock ticks (/proc/stat's first line). */
function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

/**
 * Where a phase's time went: the cores used by the service, by the database's backends (those of the
 * bench database that live through the phase: the pools'), and by the whole machine (the other work
 * on it included), how long the service's main thread waited runnable for a core, and its event loop's
 * p99 delay (prom-client's gauge, over the phase: /metrics is read at its start and end).
 */
async function meter(ctx) {
  const client = new pg.Client({ connectionString: ctx.database.url });
  await client.connect();
  const backends = async () =>
    (
      await client.query(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows.map((row) => row.pid);
  const lagP99 = async () => {
    const text = (await ctx.call(ctx.service.baseUrl, 'GET', '/metrics')).body;
    const match = /^nodejs_eventloop_lag_p99_seconds (\S+)/m.exec(typeof text === 'string' ? text : '');
    return match ? Math.round(Number(match[1]) * 10_000) / 10 : null;
  };
  const snapshot = async () => {
    const pids = await backends();
    return {
      at: performance.now(),
      service: cpuSeconds(ctx.service.pid),
      schedule: mainThreadSchedule(ctx.service.pid),
      database: new Map(pids.map((pid) => [pid, cpuSeconds(pid)])),
      machine: machineTicks(),
    };
  };
  await lagP99(); // resets the gauge's window
  const start = await snapshot();
  return async () => {
    const lag = await lagP99();
    const end = await snapshot();
    await client.end();
    const seconds = (end.at - start.at) / 1000;
    let database = 0;
    for (const [pid, cpu] of start.database) if (end.database.has(pid)) database += end.database.get(pid) - cpu;
    const cores = (value) => Math.round((value / seconds) * 100) / 100;
    const cpuCount = availableParallelism();
    return {
      'service cores': cores(end.service - start.service),
      'database cores': cores(database),
      'machine busy cores':
        Math.round(
          ((end.machine.busy - start.machine.busy) / (end.machine.total - start.machine.total)) * cpuCount * 100,
        ) / 100,
      'service main thread waiting for a core (ms/s)': Math.round(
        ((end.schedule.waitSeconds - start.schedule.waitSeconds) * 1000) / seconds,
      ),
      'event loop p99 ms': lag,
    };
  };
}

/**
 * The noisy neighbour (issue 24's shape, issue 19's figure): B searches and reads at a steady pace,
 * alone and while A floods the worst filter, in alternating phases (FILTERS_CYCLES times alone then
 * flooded, then alone once more), so that a drift of the shared machine's load weighs on both sides;
 * B's baseline is all its phases alone. A's load generator runs in a process of its own under `nice`
 * (FILTERS_FLOOD_NICE, default 10), so that on a small machine it does not take the cores from B's
 * client: what B sees is the service's and the database's doing. Each phase is metered (see meter).
 */
async function measureIsolation(ctx, flooders) {
  const seconds = ctx.seconds('FILTERS_SECONDS', 10);
  const cycles = ctx.seconds('FILTERS_CYCLES', 5);
  const rate = ctx.seconds('FILTERS_QUIET_RATE', 20);
  const connections = ctx.seconds('FILTERS_FLOOD_CONNECTIONS', 12);
  const niceness = ctx.seconds('FILTERS_FLOOD_NICE', 10);
  const floodRate = ctx.seconds('FILTERS_FLOOD_RATE', 0);
  const apart = process.env.FILTERS_DATABASE_APART === '1';
  const quiet = await tenant(ctx, 50, false);
  const unpin = apart ? await pinDatabaseApart(ctx) : () => {};
  try {
    return {
      ...(await alternate(ctx, { seconds, cycles, rate, connections, niceness, floodRate, quiet, flooders })),
      apart,
    };
  } finally {
    unpin();
  }
}

/**
 * FILTERS_DATABASE_APART=1: PostgreSQL on the first CPU, the service on the others, the load
 * generators free (see pinApart): the figure for a database with cores of its own, which a machine
 * that runs everything cannot otherwise show.
 */
async function pinDatabaseApart(ctx) {
  const client = new pg.Client({ connectionString: ctx.database.url });
  await client.connect();
  try {
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const unpin = pinApart(backend, ctx.service.pid);
    ctx.log('isolation: PostgreSQL pinned to the first CPU, the service to the others (FILTERS_DATABASE_APART=1)');
    return unpin;
  } finally {
    await client.end();
  }
}

/** B's phases alone and beside the flood, alternated (see measureIsolation). */
async function alternate(ctx, { seconds, cycles, rate, connections, niceness, floodRate, quiet, flooders }) {
  const phases = { alone: [], flooded: [] };
  const usage = { alone: [], flooded: [] };
  let flood = null;
  const statuses = { alone: {}, flooded: {} };
  const addStatuses = (into, from) => {
    for (const [key, count] of Object.entries(from)) into[key] = (into[key] ?? 0) + count;
  };
  for (let cycle = 0; cycle <= cycles; cycle++) {
    ctx.log(`isolation: B alone at ${rate}/s for ${seconds} s (${cycle + 1} of ${cycles + 1})`);
    let stop = await meter(ctx);
    const alone = await quietTraffic(ctx, quiet.headers, seconds, rate, `alone${cycle}`);
    usage.alone.push(await stop());
    phases.alone.push(alone);
    addStatuses(statuses.alone, alone.statuses);
    if (cycle === cycles) break;
    ctx.log(
      `isolation: B while ${flooders.length} organization(s) flood "${WORST}" from ${connections} connections${floodRate > 0 ? ` at ${floodRate}/s` : ''} (nice ${niceness})`,
    );
    stop = await meter(ctx);
    const [flooded, ...cannons] = await Promise.all([
      quietTraffic(ctx, quiet.headers, seconds, rate, `flooded${cycle}`),
      ...flooders.map((flooder) =>
        cannonApart(
          {
            url: `${ctx.service.baseUrl}/v1/search/`,
            method: 'POST',
            body: { query: QUERY_BODY.query, top_k: 10, filter: FILTERS[WORST] },
            headers: flooder.headers,
            connections: Math.max(1, Math.round(connections / flooders.length)),
            duration: seconds,
            ...(floodRate > 0 ? { overallRate: Math.max(1, Math.round(floodRate / flooders.length)) } : {}),
          },
          { niceness },
        ),
      ),
    ]);
    usage.flooded.push(await stop());
    phases.flooded.push(flooded);
    addStatuses(statuses.flooded, flooded.statuses);
    flood = mergeFlood(flood, cannons);
  }
  const all = (side, route) => phases[side].flatMap((phase) => phase.byRoute[route]);
  const durations = await serviceDurations(ctx);
  const inService = (side, route) =>
    summarize(
      phases[side].flatMap((phase) => phase.ids[route].map((id) => durations.get(id)).filter((ms) => ms !== undefined)),
    );
  const rows = QUIET_ROUTES.map((route) => {
    const alone = summarize(all('alone', route));
    const under = summarize(all('flooded', route));
    const aloneInside = inService('alone', route);
    const underInside = inService('flooded', route);
    return {
      'B route': route,
      'alone p50/p95/p99 ms': `${alone.p50} / ${alone.p95} / ${alone.p99}`,
      'flooded p50/p95/p99 ms': `${under.p50} / ${under.p95} / ${under.p99}`,
      'ratio p50': ratio(under.p50, alone.p50),
      'ratio p95': ratio(under.p95, alone.p95),
      'ratio p99': ratio(under.p99, alone.p99),
      'p99 ratio, 90 % interval': ratioInterval(all('flooded', route), all('alone', route), 99)?.join('–') ?? null,
      [`p99 <= ${QUIET_TARGET} x`]: ratio(under.p99, alone.p99) <= QUIET_TARGET ? 'yes' : 'no',
      'in the service p99 ms alone / flooded (ratio)': aloneInside.p99
        ? `${aloneInside.p99} / ${underInside.p99} (${ratio(underInside.p99, aloneInside.p99)})`
        : null,
    };
  });
  const usageRows = ['alone', 'flooded'].flatMap((side) =>
    usage[side].map((figures, i) => ({ phase: `${side} ${i + 1}`, ...figures })),
  );
  return { rows, usageRows, statuses, flood, seconds, cycles, rate, connections, niceness };
}

/**
 * The flood's figures over its phases: requests summed, latencies the worst phase's. A phase's
 * flooders (one load generator each) count as one flood over the phase's length.
 */
function mergeFlood(total, cannons) {
  const phase = cannons.map(floodOf).reduce((sum, flood) => addFlood(sum, flood, sum.seconds));
  return total ? addFlood(total, phase, total.seconds + phase.seconds) : phase;
}

function floodOf(cannon) {
  return {
    requests: cannon.totalRequests,
    seconds: cannon.duration,
    latencyMs: cannon.latencyMs,
    statusCodes: Object.fromEntries(Object.entries(cannon.statusCodes ?? {}).map(([code, { count }]) => [code, count])),
    errors: cannon.errors,
  };
}

/** Two floods' requests, statuses and errors summed, the worse latencies, over `seconds`. */
function addFlood(a, b, seconds) {
  const statusCodes = { ...a.statusCodes };
  for (const [code, count] of Object.entries(b.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const worse = (key) => Math.max(a.latencyMs[key], b.latencyMs[key]);
  return {
    requests: a.requests + b.requests,
    seconds,
    latencyMs: { p50: worse('p50'), p90: worse('p90'), p99: worse('p99'), max: worse('max') },
    statusCodes,
    errors: a.errors + b.errors,
  };
}

export async function run(ctx) {
  const documents = ctx.seconds('FILTERS_DOCS', 1000);
  ctx.log(`A: ${documents} documents with 20 metadata fields (~4 KB each)`);
  const flooder = await tenant(ctx, documents, true);
  const cost = await measureCost(ctx, flooder.headers);
  ctx.table(
    `filters: POST /v1/search/ one at a time, ${documents} documents, each filter matching all (target p95 <= ${TARGET} x unfiltered)`,
    cost,
  );
  const others = ctx.seconds('FILTERS_FLOODERS', 1) - 1;
  if (others > 0) ctx.log(`${others} more flooding organization(s), ${documents} documents each`);
  const flooders = [flooder];
  for (let i = 0; i < others; i++) flooders.push(await tenant(ctx, documents, true));
  const isolation = await measureIsolation(ctx, flooders);
  ctx.table(
    `filters: B's searches and reads (${isolation.rate}/s) alone vs while A floods "${WORST}" from ${isolation.connections} connections, ${isolation.cycles} phases of ${isolation.seconds} s each${isolation.apart ? ', PostgreSQL on a core apart' : ''} (target p99 <= ${QUIET_TARGET} x alone)`,
    isolation.rows,
  );
  ctx.table("filters: A's flood and B's statuses", [
    {
      'A req/s': Math.round(isolation.flood.requests / isolation.flood.seconds),
      'A p50 ms (worst phase)': isolation.flood.latencyMs.p50,
      'A p99 ms (worst phase)': isolation.flood.latencyMs.p99,
      'A statuses': JSON.stringify(isolation.flood.statusCodes),
      'B statuses alone': JSON.stringify(isolation.statuses.alone),
      'B statuses flooded': JSON.stringify(isolation.statuses.flooded),
    },
  ]);
  ctx.table('filters: where the time went, each phase', isolation.usageRows);
  return { documents, cost, isolation };
}
