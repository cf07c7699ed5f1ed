/**
 * Where does the service's time go under one kind of load? `npm run build && node bench/profile.js
 * <health|key|jwt> [seconds]` starts the built service with `--cpu-prof`, drives GET /health/ or
 * GET /auth/users/me/ (API key or JWT) at 50 connections, stops it, and prints the heaviest functions
 * (inclusive and self time, by package). The .cpuprofile stays in bench/results/ for Chrome DevTools.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './lib/database.js';
import { createKey, signUp } from './lib/http.js';
import { cannon } from './lib/load.js';
import { startService } from './lib/service.js';

const [mode = 'key', seconds = '10'] = process.argv.slice(2);
const dir = fileURLToPath(new URL(`./results/profile-${mode}-${Date.now()}/`, import.meta.url));
mkdirSync(dir, { recursive: true });

const database = await createBenchDatabase();
try {
  const service = await startService({
    databaseUrl: database.url,
    env: { RATE_LIMIT_PER_MINUTE: '1000000000' },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    logFile: `${dir}service.log`,
  });
  try {
    const user = await signUp(service.baseUrl);
    const key = await createKey(service.baseUrl, user);
    const headers = mode === 'key' ? { 'X-API-Key': key.key } : mode === 'jwt' ? user.auth : {};
    const url = mode === 'health' ? `${service.baseUrl}/health/` : `${service.baseUrl}/auth/users/me/`;
    const result = await cannon({ url, headers, connections: 50, duration: Number(seconds) });
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
const where = (url) => url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? (url.includes('/dist/') ? `app:${url.split('/dist/').pop()}` : url || '(native)');
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
const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, t]) => `${((t / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
console.log(`\nself time\n${top(self, 20).join('\n')}\n\ninclusive time\n${top(inclusive, 40).join('\n')}\n\nprofile: ${dir}${file}`);
