import { execFileSync } from 'node:child_process';
import { workerScript } from '../../src/documents/workers/worker-script.js';

// Run in a process of its own: renicing this one would slow the file system calls of later test files.
function inFreshProcess(): { reniced: number; pool: { name: string; nice: number }[] } {
  const hooks = workerScript(import.meta.url, 'thread-pool-priority').execArgv ?? [];
  const script = `
    import { readdirSync, readFileSync } from 'node:fs';
    import { yieldThreadPool } from ${JSON.stringify(new URL('../../src/lifecycle/thread-pool-priority.ts', import.meta.url).href)};
    const reniced = await yieldThreadPool(10);
    const pool = readdirSync('/proc/self/task').map((thread) => {
      const stat = readFileSync('/proc/self/task/' + thread + '/stat', 'utf8');
      return { name: readFileSync('/proc/self/task/' + thread + '/comm', 'utf8').trim(), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) };
    });
    console.log(JSON.stringify({ reniced, pool }));`;
  return JSON.parse(
    execFileSync(process.execPath, [...hooks, '--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

describe('yieldThreadPool', () => {
  it("renices libuv's pool threads, and only them, where Node names them (22 and later)", () => {
    const { reniced, pool } = inFreshProcess();
    const named = pool.filter((thread) => thread.name === 'libuv-worker');
    if (Number(process.versions.node.split('.')[0]) >= 22) expect(named.length).toBeGreaterThanOrEqual(4);
    expect(reniced).toBe(named.length);
    const processNice = pool[0].nice; // the main thread's, as the process started
    for (const thread of pool) expect(thread.nice).toBe(thread.name === 'libuv-worker' ? 10 : processNice);
  });
});
