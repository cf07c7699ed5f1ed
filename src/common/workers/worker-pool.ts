import { type ResourceLimits, Worker } from 'node:worker_threads';

export interface WorkerPoolOptions {
  /** Threads running at once; tasks beyond wait in order. */
  size: number;
  /** Wall-clock limit of one task, from when a thread takes it; past it the thread is terminated. */
  timeoutMs: number;
  resourceLimits: ResourceLimits;
}

/** The pool is closing (the application is shutting down). */
export class WorkerPoolClosedError extends Error {}

/** A task that ran past `timeoutMs`; its thread was terminated. */
export class WorkerTimeoutError extends Error {}

/** A task whose thread died under it: over its heap limit (`code` ERR_WORKER_OUT_OF_MEMORY) or crashed. */
export class WorkerCrashedError extends Error {
  constructor(readonly code: string | undefined) {
    super(`worker thread died (${code ?? 'no code'})`);
  }
}

interface Task {
  message: unknown;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * A few long-lived worker threads, each running one task at a time: CPU-heavy work that must not
 * stall the event loop. A thread that times out or runs out of memory is thrown away (its task
 * fails, nobody else's does) and a fresh one is started for the next task.
 *
 * A worker module answers each message with exactly one message.
 */
export class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly queue: Task[] = [];
  private live = 0;
  private closed = false;

  constructor(
    private readonly script: { url: URL; execArgv?: string[] },
    private readonly options: WorkerPoolOptions,
  ) {}

  run<T>(message: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new WorkerPoolClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ message, resolve: resolve as (value: unknown) => void, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new WorkerPoolClosedError());
    await Promise.all(this.idle.splice(0).map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && (this.idle.length > 0 || this.live < this.options.size)) {
      const worker = this.idle.pop() ?? this.spawn();
      this.execute(worker, this.queue.shift()!);
    }
  }

  private spawn(): Worker {
    this.live++;
    return new Worker(this.script.url, { execArgv: this.script.execArgv, resourceLimits: this.options.resourceLimits });
  }

  private execute(worker: Worker, task: Task): void {
    worker.ref();
    const settle = (outcome: { value: unknown } | { error: Error }, keep: boolean) => {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if ('value' in outcome) task.resolve(outcome.value);
      else task.reject(outcome.error);
      if (keep && !this.closed) {
        worker.unref(); // an idle thread does not keep the process alive
        this.idle.push(worker);
      } else {
        this.live--;
        void worker.terminate();
      }
      this.dispatch();
    };
    const onMessage = (value: unknown) => settle({ value }, true);
    const onError = (error: Error & { code?: string }) => settle({ error: new WorkerCrashedError(error.code) }, false);
    const onExit = (code: number) => settle({ error: new WorkerCrashedError(`exit ${code}`) }, false);
    const timer = setTimeout(() => settle({ error: new WorkerTimeoutError() }, false), this.options.timeoutMs);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage(task.message);
  }
}
