/**
 * `npm run bench [-- <section> ...]`: builds the service, starts it as a child process (`node dist/main.js`)
 * on a fresh PostgreSQL database `kqs_bench_*`, runs the named sections (default: every section not
 * marked `explicitOnly`; `all` runs every section), prints a table per section and writes one JSON
 * file to bench/results/ (gitignored). Speed figures need the machine to themselves: run it as
 * `flock /tmp/bench.lock npm run bench -- core`. BENCH_SERVICE_ENV="LOG_LEVEL=warn,OTHER=x" adds to
 * (or overrides) the service's environment, to measure what one setting costs; BENCH_SERVICE_NODE_ARGS
 * ("--cpu-prof --cpu-prof-dir=/tmp/p") replaces the Node options of every service the run starts (by
 * default production's, SERVICE_NODE_ARGS in bench/lib/service.js; "" for none).
 * BENCH_KEEP_DATABASE=1 keeps the run's databases (the main one's name is logged), to EXPLAIN their statements.
 *
 * Adding a section is one line in SECTIONS below. A section is an ES module in bench/sections/:
 *
 *   export const description = 'one line for --help';
 *   export const explicitOnly = false;     // optional; true = only when named (long runs such as soak)
 *   export async function run(ctx) { ...; return { ...JSON-serialisable figures... }; }
 *
 * `ctx` gives a section:
 *   ctx.service        the shared service: { baseUrl, pid, rssMb(), familyRssMb(), stop() } (started before the first section)
 *   ctx.database       its database: { url, name }
 *   ctx.startService({ env, databaseUrl, nodeArgs, main })  another instance (stopped at the end), e.g. other env;
 *                                                          `main`: another build's dist/main.js
 *   ctx.createDatabase()                               another fresh database (dropped at the end)
 *   ctx.call(baseUrl, method, path, { body, headers }) -> { status, body, headers }
 *   ctx.signUp(baseUrl?) -> { email, password, access, refresh, auth }   ctx.createKey(user, name?, baseUrl?)
 *   ctx.cannon({ url, connections, duration, headers, method, body, overallRate })   autocannon, summarised
 *   ctx.paced({ baseUrl, rate, durationSeconds, next(i) })                           open-loop fixed rate
 *   ctx.table(title, rows)   ctx.log(message)   ctx.args (argv after the section names)   ctx.seconds(name, dflt)
 * A section throws to fail; run.js records the error, goes on with the next section, and exits 1.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './lib/database.js';
import { call, createKey, signUp } from './lib/http.js';
import { cannon, paced } from './lib/load.js';
import { startService } from './lib/service.js';

const SECTIONS = {
  abuse: () => import('./sections/abuse.js'),
  answers: () => import('./sections/answers.js'),
  batch: () => import('./sections/batch.js'),
  collections: () => import('./sections/collections.js'),
  core: () => import('./sections/core.js'),
  extraction: () => import('./sections/extraction.js'),
  filters: () => import('./sections/filters.js'),
  'key-caps': () => import('./sections/key-caps.js'),
  idempotency: () => import('./sections/idempotency.js'),
  mcp: () => import('./sections/mcp.js'),
  'idempotency-flood': () => import('./sections/idempotency-flood.js'),
  soak: () => import('./sections/soak.js'),
  teams: () => import('./sections/teams.js'),
  tenants: () => import('./sections/tenants.js'),
  query: () => import('./sections/query.js'),
  'query-floor': () => import('./sections/query-floor.js'),
  openai: () => import('./sections/openai.js'),
  quota: () => import('./sections/quota.js'),
  scifact: () => import('./sections/scifact.js'),
  search: () => import('./sections/search.js'),
  'search-growth': () => import('./sections/search-growth.js'),
  'vector-stores': () => import('./sections/vector-stores.js'),
  'collection-delete': () => import('./sections/collection-delete.js'),
  webhooks: () => import('./sections/webhooks.js'),
};

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

function log(message) {
  process.stdout.write(`[bench] ${message}\n`);
}

function table(title, rows) {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '')));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((cell) => cell[i].length)));
  const line = (values) => values.map((value, i) => value.padEnd(widths[i])).join('  ');
  process.stdout.write(`\n${title}\n${line(columns)}\n${line(widths.map((w) => '-'.repeat(w)))}\n`);
  for (const cell of cells) process.stdout.write(`${line(cell)}\n`);
  process.stdout.write('\n');
}

function gitState() {
  try {
    const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    const dirty = execSync('git status --porcelain -- src', { encoding: 'utf8' }).trim() !== '';
    return { commit, dirtySrc: dirty };
  } catch {
    return null;
  }
}

/** Redis for the service's shared counters, unless BENCH_REDIS_URL is set empty. */
async function redisUrl() {
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  return url === '' ? undefined : url;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    for (const [name, load] of Object.entries(SECTIONS)) {
      const section = await load();
      log(`${name.padEnd(14)} ${section.description ?? ''}${section.explicitOnly ? ' (only when named)' : ''}`);
    }
    return;
  }
  const named = argv.filter((arg) => arg === 'all' || arg in SECTIONS);
  const args = argv.filter((arg) => !named.includes(arg));
  const unknown = args.filter((arg) => !arg.startsWith('-') && !arg.includes('='));
  if (unknown.length > 0)
    throw new Error(`unknown section(s) ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`);

  const modules = {};
  for (const [name, load] of Object.entries(SECTIONS)) modules[name] = await load();
  const chosen =
    named.length === 0
      ? Object.keys(modules).filter((name) => !modules[name].explicitOnly)
      : named.includes('all')
        ? Object.keys(modules)
        : named;

  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const logFile = `${RESULTS_DIR}service-${stamp}.log`;
  const cleanups = [];
  const redis = await redisUrl();
  const serviceNodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean);
  const baseEnv = {
    // The limiter still counts every request, but the load of one key (or organization) must not trip it.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    ORG_RATE_LIMIT_PER_MINUTE: '1000000000',
    KEY_RATE_LIMIT_MAX_PER_MINUTE: '1000000',
    // Every load comes from 127.0.0.1: the per-address limits before authentication would throttle
    // the soak's sign-ins. A section about abuse sets its own.
    SIGNUP_LIMIT_PER_HOUR: '1000000000',
    SIGNIN_LIMIT_PER_MINUTE: '1000000000',
    TOKEN_LIMIT_PER_MINUTE: '1000000000',
    ...(redis ? { REDIS_URL: redis } : {}),
    ...serviceEnvOverrides(process.env.BENCH_SERVICE_ENV),
  };

  const report = {
    startedAt: new Date().toISOString(),
    git: gitState(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAverage: os.loadavg(),
    serviceEnv: { ...baseEnv, NODE_ENV: 'production' },
    sections: {},
  };

  let failed = false;
  try {
    const database = await createBenchDatabase();
    if (process.env.BENCH_KEEP_DATABASE !== '1') cleanups.push(() => database.drop());
    log(`database ${database.name}; service log ${logFile}`);
    const service = await startService({ databaseUrl: database.url, env: baseEnv, logFile, nodeArgs: serviceNodeArgs });
    cleanups.unshift(() => service.stop());

    const ctx = {
      service,
      database,
      args,
      log,
      table,
      call,
      cannon,
      paced,
      signUp: (baseUrl = service.baseUrl) => signUp(baseUrl),
      createKey: (user, name, baseUrl = service.baseUrl) => createKey(baseUrl, user, name),
      seconds: (name, fallback) => Number(process.env[name] ?? fallback),
      async createDatabase() {
        const extra = await createBenchDatabase();
        if (process.env.BENCH_KEEP_DATABASE !== '1') cleanups.push(() => extra.drop());
        return extra;
      },
      async startService({ env = {}, databaseUrl = database.url, nodeArgs = serviceNodeArgs, main } = {}) {
        const extra = await startService({ databaseUrl, env: { ...baseEnv, ...env }, logFile, nodeArgs, main });
        cleanups.unshift(() => extra.stop());
        return extra;
      },
    };

    for (const name of chosen) {
      log(`section ${name}: ${modules[name].description ?? ''}`);
      const started = Date.now();
      try {
        report.sections[name] = await modules[name].run(ctx);
      } catch (error) {
        failed = true;
        report.sections[name] = { error: error instanceof Error ? error.message : String(error) };
        log(`section ${name} failed: ${error instanceof Error ? error.stack : error}`);
      }
      log(`section ${name} took ${Math.round((Date.now() - started) / 1000)} s`);
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error) => log(`cleanup: ${error.message}`));
    report.finishedAt = new Date().toISOString();
    const file = `${RESULTS_DIR}bench-${stamp}.json`;
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${file}`);
  }
  if (failed) process.exitCode = 1;
}

main().catch((error) => {
  log(error instanceof Error ? error.stack : String(error));
  process.exitCode = 1;
});

/** `A=1,B=2` (BENCH_SERVICE_ENV) as an object. */
function serviceEnvOverrides(text = '') {
  return Object.fromEntries(
    text
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}
