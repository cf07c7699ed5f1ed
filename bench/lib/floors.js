import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntilReady } from './service.js';

const SERVER = fileURLToPath(new URL('../floors/server.js', import.meta.url));

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
  const controls = await waitUntilReady(child, {
    name: `floor ${kind}`,
    readyUrl: `${baseUrl}/health/`,
    readyTimeoutMs,
    pollMs: 50,
  });
  return {
    kind,
    baseUrl,
    pid: child.pid,
    rssMb: controls.rssMb,
    stop: (timeoutMs = 5_000) => controls.stop(timeoutMs),
  };
}
