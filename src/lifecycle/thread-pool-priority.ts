import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setPriority } from 'node:os';

/** What libuv names its thread-pool threads on Linux (Node 22 and later; Node 20's have no name). */
const POOL_THREAD_NAME = 'libuv-worker';

/**
 * Lowers the priority of libuv's thread pool, where argon2 hashes passwords (and file system calls
 * run), to `niceness`, so that when the event loop and the pool want the same CPU the event loop gets
 * it: a sign-in flood's hashes then slow other sign-ins, not every request and probe. Linux keeps a
 * niceness per thread. Returns how many threads it reniced: 0 where the threads cannot be told apart
 * (other systems, Node 20) or renicing is not permitted.
 */
export async function yieldThreadPool(niceness: number): Promise<number> {
  await stat('.'); // libuv starts the pool's threads with its first task
  let reniced = 0;
  try {
    for (const thread of readdirSync('/proc/self/task')) {
      if (readFileSync(`/proc/self/task/${thread}/comm`, 'utf8').trim() !== POOL_THREAD_NAME) continue;
      setPriority(Number(thread), niceness);
      reniced++;
    }
  } catch {
    // No /proc, or not permitted: the pool keeps the process's priority.
  }
  return reniced;
}
