import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { familyMemoryMb, familyRssMb, rssMb } from './proc.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

function tryPort(port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address();
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A port nobody listens on: any free one, or with BENCH_PORTS="3440-3449" (on a shared machine, the
 * range one was given) the first free one in that range.
 */
export async function freePort() {
  const range = /^(\d+)-(\d+)$/.exec(process.env.BENCH_PORTS ?? '');
  if (!range) return tryPort(0);
  for (let port = Number(range[1]); port <= Number(range[2]); port++) {
    try {
      return await tryPort(port);
    } catch {
      // taken: the next one
    }
  }
  throw new Error(`BENCH_PORTS ${process.env.BENCH_PORTS}: no free port in the range`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The service's Node options in production (`npm start`, the Dockerfile's CMD): measured as it runs. */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=16'];

/**
 * Starts the built service (`node dist/main.js`) as a child process, so the load generator never shares
 * its event loop. Its output goes to `logFile`. Resolves once `/health/ready/` answers 200. `main`: another
 * build's entry point (e.g. an earlier revision built in a temporary worktree; default this checkout's).
 */
export async function startService({
  databaseUrl,
  env = {},
  logFile,
  nodeArgs = SERVICE_NODE_ARGS,
  readyTimeoutMs = 60_000,
  main = MAIN,
}) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const output = logFile ? openSync(logFile, 'a') : 'ignore';
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      JWT_SECRET: randomBytes(48).toString('base64url'),
      ...env,
    },
    stdio: ['ignore', output, output],
  });
  const controls = await waitUntilReady(child, {
    name: 'service',
    readyUrl: `${baseUrl}/health/ready/`,
    readyTimeoutMs,
    pollMs: 100,
    hint: `; see ${logFile ?? 'its output'}`,
  });
  return {
    baseUrl,
    pid: child.pid,
    child,
    logFile,
    ...controls,
    stop: (timeoutMs = 15_000) => controls.stop(timeoutMs),
  };
}

/**
 * Waits until `readyUrl` answers 200 from a child process just spawned (throwing if it exits or the time
 * runs out), then hands back what the benches need of it: `exit` (resolves with {code, signal}),
 * `rssMb()`, `familyRssMb()` (with its child processes) and `familyMemoryMb()` from /proc, and `stop(timeoutMs)`: SIGTERM,
 * then SIGKILL after `timeoutMs`.
 */
export async function waitUntilReady(child, { name, readyUrl, readyTimeoutMs, pollMs, hint = '' }) {
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exited = { code, signal }))));
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) throw new Error(`${name} exited during start (${JSON.stringify(exited)})${hint}`);
    try {
      if ((await fetch(readyUrl)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not become ready within ${readyTimeoutMs} ms`);
    }
    await sleep(pollMs);
  }
  return {
    exit,
    /** Resident set size of the process in MB, rounded. */
    rssMb: () => Math.round(rssMb(child.pid)),
    /** The same with its child processes (the service's extraction workers). */
    familyRssMb: () => Math.round(familyRssMb(child.pid)),
    /** The same with shared pages counted once (see proc.js familyMemoryMb): what a container is charged. */
    familyMemoryMb: () => Math.round(familyMemoryMb(child.pid)),
    /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with the exit code and signal. */
    async stop(timeoutMs) {
      if (exited) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
  };
}
