import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface WorkerPoolOptions {
  /** Worker processes running at once; tasks beyond wait in order. */
  size: number;
  /** Wall-clock limit of one task, from when a worker takes it; past it the worker is killed. */
  timeoutMs: number;
  /** V8 heap limit of each worker (`--max-old-space-size`). */
  memoryMb: number;
  /**
   * A worker left holding more resident memory than this after a task is replaced: V8 keeps the
   * heap a big document grew to, and an idle worker should not sit on it.
   */
  recycleAboveMb: number;
}

/** The pool is closing (the application is shutting down). */
export class WorkerPoolClosedError extends Error {}

/** A task that ran past `timeoutMs`; its worker was killed. */
export class WorkerTimeoutError extends Error {}

/** A task whose worker died under it: over its heap limit (`outOfMemory`) or otherwise. */
export class WorkerCrashedError extends Error {
  constructor(
    readonly outOfMemory: boolean,
    how: string,
  ) {
    super(`worker process died (${how})`);
  }
}

interface Task {
  message: unknown;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** Resident memory of a process in MB, from /proc (0 where there is none). */
function residentMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** V8 prints this when a heap limit is reached, then aborts. */
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit/;
// What V8 prints on its way out of memory, over several writes: the GC trace comes first.
const V8_MEMORY_REPORT = /Last few GCs|allocation failure|heap out of memory|Reached heap limit|JS stacktrace/;

/**
 * A few long-lived worker processes, each running one task at a time: CPU- and memory-heavy work that
 * must not stall the event loop. Processes rather than worker threads: a thread that overruns its
 * heap while V8 is inside one large allocation aborts the whole process (seen here with pdf.js), a
 * child process only itself. A worker that times out or dies is thrown away (its task fails, nobody
 * else's does) and a fresh one is started for the next task.
 *
 * A worker module answers each message with exactly one message (see extract.worker.ts).
 */
export class WorkerPool {
  private readonly idle: ChildProcess[] = [];
  private readonly busy = new Set<ChildProcess>();
  private readonly queue: Task[] = [];
  private readonly outOfMemory = new WeakSet<ChildProcess>();
  private live = 0;
  private closed = false;

  constructor(
    private readonly script: { url: URL; execArgv?: string[] },
    private readonly options: WorkerPoolOptions,
  ) {}

  run<T>(message: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new WorkerPoolClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ message, resolve: resolve, reject });
      this.dispatch();
    });
  }

  close(): void {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new WorkerPoolClosedError());
    // Tasks still running fail with WorkerPoolClosedError (see onClose).
    for (const worker of [...this.idle.splice(0), ...this.busy]) worker.kill('SIGKILL');
  }

  private dispatch(): void {
    while (this.idle.length > 0 || this.live < this.options.size) {
      const task = this.queue.shift();
      if (!task) return;
      this.execute(this.idle.pop() ?? this.spawn(), task);
    }
  }

  private spawn(): ChildProcess {
    this.live++;
    const worker = fork(fileURLToPath(this.script.url), [], {
      execArgv: [...(this.script.execArgv ?? []), `--max-old-space-size=${this.options.memoryMb}`],
      serialization: 'advanced', // Buffers and typed arrays as they are, not as JSON
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    worker.stderr?.on('data', (data: Buffer) => {
      const text = data.toString();
      if (OUT_OF_MEMORY.test(text)) this.outOfMemory.add(worker);
      if (this.outOfMemory.has(worker)) return; // the rest of V8's report: its native stack
      // V8's out-of-memory report is not passed on: the refusal is logged as a line of our own, and
      // the raw report would read as the service itself dying (test runners take it so, too).
      if (!V8_MEMORY_REPORT.test(text)) process.stderr.write(data);
    });
    // A send to a worker that has just died fails here; its 'close' then settles the task.
    worker.on('error', () => {});
    // An idle worker that dies (killed from outside) is forgotten, not handed the next task.
    worker.once('exit', () => {
      const index = this.idle.indexOf(worker);
      if (index === -1) return;
      this.idle.splice(index, 1);
      this.live--;
    });
    return worker;
  }

  private execute(worker: ChildProcess, task: Task): void {
    const settle = (outcome: { value: unknown } | { error: Error }, keep: boolean) => {
      clearTimeout(timer);
      this.busy.delete(worker);
      worker.off('message', onMessage).off('close', onClose);
      if ('value' in outcome) task.resolve(outcome.value);
      else task.reject(outcome.error);
      if (keep && !this.closed) {
        this.idle.push(worker);
      } else {
        this.live--;
        worker.kill('SIGKILL');
      }
      this.dispatch();
    };
    const onMessage = (value: unknown) => settle({ value }, residentMb(worker.pid) <= this.options.recycleAboveMb);
    // 'close' rather than 'exit': it comes after stderr is drained, so V8's last words have been seen.
    const onClose = (code: number | null, signal: string | null) => {
      if (this.closed) {
        settle({ error: new WorkerPoolClosedError() }, false);
        return;
      }
      settle(
        { error: new WorkerCrashedError(this.outOfMemory.has(worker), signal ?? `exit code ${code ?? 'unknown'}`) },
        false,
      );
    };
    const timer = setTimeout(() => settle({ error: new WorkerTimeoutError() }, false), this.options.timeoutMs);
    this.busy.add(worker);
    worker.on('message', onMessage).on('close', onClose);
    worker.send(task.message as object);
  }
}
