import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { WorkerScript } from './worker-script.js';

export interface WorkerPoolOptions {
  /** Worker processes running at once; tasks beyond wait in order. */
  size: number;
  /**
   * Limit of one task, from when a worker takes it; past it the worker is killed. Counted in the
   * worker's CPU time where /proc tells it, so that a busy machine does not make a task too slow; in
   * wall-clock time elsewhere.
   */
  timeoutMs: number;
  /** Wall-clock backstop of one task (at least `timeoutMs`): past it the worker is killed, starved. */
  wallTimeoutMs: number;
  /** V8 heap limit of each worker (`--max-old-space-size`). */
  memoryMb: number;
  /**
   * Resident memory a worker may reach while it runs a task, read every MEMORY_CHECK_MS (it may pass it
   * by what it allocates in that time); past it the worker is killed and the task fails as out of
   * memory. A container's limit counts resident memory, which the heap limit does not bound: V8
   * overshoots it within one long synchronous run, and buffers live outside it. Keep `recycleAboveMb`
   * below it, or a worker kept idle above it fails its next task.
   */
  residentLimitMb: number;
  /**
   * A worker left holding more resident memory than this after a task is replaced: V8 keeps the
   * heap a big document grew to, and an idle worker should not sit on it.
   */
  recycleAboveMb: number;
  /**
   * The workers' niceness (0 to 19): above 0, when they and the event loop want the same CPU the event
   * loop gets it first, so a long extraction slows other uploads rather than every request and probe.
   */
  niceness?: number;
}

/**
 * What a worker module sends once, when it has loaded and can take tasks. A fresh worker is handed its
 * first task only then, and the task's CPU time is counted from then: loading the module (pdf.js, or
 * the TypeScript hooks under the test runner) is the pool's cost, not the file's.
 */
export const WORKER_READY = 'worker-ready';

/** The pool is closing (the application is shutting down). */
export class WorkerPoolClosedError extends Error {}

/**
 * A task that ran past `timeoutMs`; its worker was killed. `starved`: it had used less CPU than that
 * when the wall-clock backstop stopped it, so what made it slow was the machine (CPU taken by other
 * work, a stalled disk, a stopped process), not the task.
 */
export class WorkerTimeoutError extends Error {
  constructor(readonly starved: boolean) {
    super(starved ? 'worker task starved of CPU' : 'worker task timed out');
  }
}

/** How often a running task's CPU time is read once its wall-clock time has passed `timeoutMs`. */
const CPU_CHECK_MS = 250;
/** How often a running task's resident memory is read (a /proc read, some 20 µs). */
const MEMORY_CHECK_MS = 25;

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

/**
 * The young generation's semi-space of each worker, fixed so that its heap limit does not depend on the
 * Node version: from `--max-old-space-size=96`, Node 24 sizes the young generation at 3 × 64 MB (a heap
 * limit of 302 MB), Node 20 at 3 × 16 MB (151 MB). Measured on Node 24 with the hostile PDFs of the
 * abuse bench: the worker's peak 345 → 263 MiB (text operators) and 296 → 174 MiB (100,000 pages), as
 * on Node 20, in the same time.
 */
const SEMI_SPACE_MB = 8;

/** Clock ticks per second of /proc/<pid>/stat's CPU times: USER_HZ, 100 on Linux. */
const USER_HZ = 100;

/** CPU time (user + system) a process has used so far, in ms; undefined without /proc. */
function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // The fields after the command name (in parentheses; it may hold spaces and parentheses), from the
    // state on: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return undefined;
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
 * A worker module sends WORKER_READY once it has loaded, then answers each message with exactly one
 * message (see extract.worker.ts).
 */
export class WorkerPool {
  private readonly idle: ChildProcess[] = [];
  private readonly busy = new Set<ChildProcess>();
  private readonly queue: Task[] = [];
  private readonly outOfMemory = new WeakSet<ChildProcess>();
  /** Workers that have sent WORKER_READY. */
  private readonly ready = new WeakSet<ChildProcess>();
  private live = 0;
  private closed = false;

  constructor(
    private readonly script: WorkerScript,
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
      execArgv: [
        ...(this.script.execArgv ?? []),
        `--max-old-space-size=${this.options.memoryMb}`,
        `--max-semi-space-size=${SEMI_SPACE_MB}`,
      ],
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
    if (this.options.niceness && worker.pid !== undefined) {
      try {
        setPriority(worker.pid, this.options.niceness);
      } catch {
        // Not permitted or not supported here: the worker runs at the service's priority.
      }
    }
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
      clearInterval(memoryWatch);
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
    const onMessage = (value: unknown) => {
      if (this.ready.has(worker)) {
        settle({ value }, residentMb(worker.pid) <= this.options.recycleAboveMb);
      } else if (value === WORKER_READY) {
        this.ready.add(worker);
        start();
      }
    };
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
    const { timeoutMs } = this.options;
    // The wall-clock backstop runs from now, a fresh worker's loading included: a machine too busy to
    // start one starves the task (a 503 to retry).
    const wallDeadline = Date.now() + Math.max(this.options.wallTimeoutMs, timeoutMs);
    let cpuAtStart: number | undefined;
    const start = () => {
      clearTimeout(timer);
      cpuAtStart = cpuMsOf(worker.pid);
      timer = setTimeout(check, Math.min(timeoutMs, wallDeadline - Date.now()));
      worker.send(task.message as object);
    };
    const starveWhileLoading = () => settle({ error: new WorkerTimeoutError(true) }, false);
    // First read when the wall-clock time reaches the limit. The CPU time is summed over the worker's
    // threads, so its GC helpers may have put it a little ahead by then; that is accepted.
    const check = () => {
      const cpuNow = cpuMsOf(worker.pid);
      if (cpuNow === undefined || cpuAtStart === undefined || cpuNow - cpuAtStart >= timeoutMs) {
        settle({ error: new WorkerTimeoutError(false) }, false);
      } else if (Date.now() >= wallDeadline) {
        settle({ error: new WorkerTimeoutError(true) }, false);
      } else {
        const cpuLeft = timeoutMs - (cpuNow - cpuAtStart);
        timer = setTimeout(check, Math.min(Math.max(cpuLeft, CPU_CHECK_MS), wallDeadline - Date.now()));
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const { residentLimitMb } = this.options;
    const memoryWatch = setInterval(() => {
      // Closing, the worker is being killed: its 'close' settles the task as closed.
      if (this.closed || residentMb(worker.pid) <= residentLimitMb) return;
      this.outOfMemory.add(worker);
      settle({ error: new WorkerCrashedError(true, `resident memory over ${residentLimitMb} MB`) }, false);
    }, MEMORY_CHECK_MS);
    this.busy.add(worker);
    worker.on('message', onMessage).on('close', onClose);
    if (this.ready.has(worker)) start();
    else timer = setTimeout(starveWhileLoading, wallDeadline - Date.now());
  }
}
