import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from './service.js';

const SERVER = fileURLToPath(new URL('../floors/server.js', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a bare floor server (bench/floors/server.js: `node` or `fastify`) as a child process and
 * resolves once its GET /health/ answers 200: `{ kind, baseUrl, pid, rssMb(), stop() }`.
 */
export async function startFloor(kind, { readyTimeoutMs = 15_000 } = {}) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [SERVER, kind, String(port)], {
    env: { PATH: process.env.PATH, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exited = { code, signal }))));
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) throw new Error(`floor ${kind} exited during start (${JSON.stringify(exited)})`);
    try {
      if ((await fetch(`${baseUrl}/health/`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`floor ${kind} did not answer within ${readyTimeoutMs} ms`);
    }
    await sleep(50);
  }
  return {
    kind,
    baseUrl,
    pid: child.pid,
    rssMb() {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return match ? Math.round(Number(match[1]) / 1024) : null;
    },
    async stop(timeoutMs = 5_000) {
      if (exited) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
  };
}
