import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sparePort } from './throwaway-postgres.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
// Under node_modules so the built files resolve the project's packages, and out of everyone's dist/.
const OUT = join(ROOT, 'node_modules', '.cache', 'kqs-test-build');

let built: Promise<string> | null = null;

/** Compiles src/ once per test process into a private directory; resolves to its main.js. */
export function buildService(): Promise<string> {
  built ??= (async () => {
    mkdirSync(OUT, { recursive: true });
    // tsc emits even when someone's work in progress has type errors; only a missing main.js fails.
    await run(
      join(ROOT, 'node_modules', '.bin', 'tsc'),
      ['-p', join(ROOT, 'tsconfig.build.json'), '--outDir', OUT, '--tsBuildInfoFile', join(OUT, '.tsbuildinfo')],
      {
        cwd: ROOT,
      },
    ).catch((error: unknown) => {
      if (!existsSync(join(OUT, 'main.js'))) throw error;
    });
    return join(OUT, 'main.js');
  })();
  return built;
}

export interface RunningService {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node main.js` with the given environment and waits until /health/ready/ answers 200 (30 s
 * unless `readyWithinMs` says otherwise).
 */
export async function startBuiltService(
  env: Record<string, string>,
  { readyWithinMs = 30_000 }: { readyWithinMs?: number } = {},
): Promise<RunningService> {
  const main = await buildService();
  const port = await sparePort();
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited during boot:\n${output}`);
    const status = await fetch(`${url}/health/ready/`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not ready within ${readyWithinMs / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, port, child, output: () => output, exited };
}
