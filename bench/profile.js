/**
 * Where does the service's time go under one kind of load? `npm run build && node bench/profile.js
 * <health|key|jwt|query> [seconds]` starts the built service with `--cpu-prof`, drives GET /health/,
 * GET /auth/users/me/ (API key or JWT) or POST /v1/query/ (API key, the query section's corpus of
 * BENCH_QUERY_DOCS private documents, default 500, uploaded before the load) at 50 connections,
 * stops it, and prints the heaviest functions (inclusive and self time, by package). The .cpuprofile
 * stays in bench/results/ for Chrome DevTools. The service's CPU only: PostgreSQL's is not in it.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './lib/database.js';
import { call, createKey, signUp } from './lib/http.js';
import { cannon } from './lib/load.js';
import { prepareQueryCorpus, QUERY_BODY } from './lib/query-corpus.js';
import { startService } from './lib/service.js';

const [mode = 'key', seconds = '10'] = process.argv.slice(2);
const dir = fileURLToPath(new URL(`./results/profile-${mode}-${Date.now()}/`, import.meta.url));
mkdirSync(dir, { recursive: true });

const database = await createBenchDatabase();
try {
  const service = await startService({
    databaseUrl: database.url,
    env: { RATE_LIMIT_PER_MINUTE: '1000000000', ORG_RATE_LIMIT_PER_MINUTE: '1000000000' },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    logFile: `${dir}service.log`,
  });
  try {
    let result;
    if (mode === 'query') {
      const ctx = {
        service,
        database,
        call,
        log: (m) => console.log(m),
        signUp: () => signUp(service.baseUrl),
        createKey: (user, name) => createKey(service.baseUrl, user, name),
      };
      const { headers } = await prepareQueryCorpus(ctx, Number(process.env.BENCH_QUERY_DOCS ?? 500), 'profile');
      result = await cannon({
        url: `${service.baseUrl}/v1/query/`,
        method: 'POST',
        body: QUERY_BODY,
        headers,
        connections: 50,
        duration: Number(seconds),
      });
    } else {
      const user = await signUp(service.baseUrl);
      const key = await createKey(service.baseUrl, user);
      const headers = mode === 'key' ? { 'X-API-Key': key.key } : mode === 'jwt' ? user.auth : {};
      const url = mode === 'health' ? `${service.baseUrl}/health/` : `${service.baseUrl}/auth/users/me/`;
      result = await cannon({ url, headers, connections: 50, duration: Number(seconds) });
    }
    console.log(`${mode}: ${result.requestsPerSecond} req/s, non-2xx ${result.non2xx}`);
  } finally {
    await service.stop();
  }
} finally {
  await database.drop();
}

const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${dir} (did the service exit cleanly?)`);
const profile = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const selfTime = new Map();
profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + profile.timeDeltas[i]));
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);
const where = (url) =>
  url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ??
  (url.includes('/dist/') ? `app:${url.split('/dist/').pop()}` : url || '(native)');
const label = (node) => `${node.callFrame.functionName || '(anonymous)'} ${where(node.callFrame.url)}`;
const inclusive = new Map();
const self = new Map();
for (const [id, time] of selfTime) {
  self.set(label(nodes.get(id)), (self.get(label(nodes.get(id))) ?? 0) + time);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = label(nodes.get(at));
    if (!seen.has(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    seen.add(name);
  }
}
const top = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, t]) => `${((t / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
console.log(
  `\nself time\n${top(self, 20).join('\n')}\n\ninclusive time\n${top(inclusive, 40).join('\n')}\n\nprofile: ${dir}${file}`,
);
