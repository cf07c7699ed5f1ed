import { WorkerCrashedError, WorkerPool, WorkerTimeoutError } from '../../src/documents/workers/worker-pool.js';

// A worker that holds Buffers: memory outside the V8 heap, which `--max-old-space-size` does not bound.
const script = { url: new URL('../fixtures/holding.worker.mjs', import.meta.url) };
const options = { size: 1, timeoutMs: 10_000, wallTimeoutMs: 20_000, memoryMb: 64, recycleAboveMb: 100 };

describe('WorkerPool resident memory limit', () => {
  let pool: WorkerPool;
  afterEach(() => pool.close());

  it('stops a worker whose resident memory passes the limit, though its heap is under its own', async () => {
    pool = new WorkerPool(script, { ...options, residentLimitMb: 150 });
    const outcome = pool.run({ holdMb: 400, answerAfterMs: 2000 });
    await expect(outcome).rejects.toBeInstanceOf(WorkerCrashedError);
    await expect(outcome).rejects.toMatchObject({
      outOfMemory: true,
      message: 'worker process died (resident memory over 150 MB)',
    });
    // A fresh worker takes the next task.
    await expect(pool.run({ holdMb: 10 })).resolves.toEqual({ heldMb: 10 });
  });

  it('lets a task run that stays under the limit', async () => {
    pool = new WorkerPool(script, { ...options, residentLimitMb: 400 });
    await expect(pool.run({ holdMb: 100, answerAfterMs: 200 })).resolves.toEqual({ heldMb: 100 });
  });
});

describe('WorkerPool time limit and a fresh worker', () => {
  const slowStart = { url: new URL('../fixtures/slow-start.worker.mjs', import.meta.url) };
  const neverReady = { url: new URL('../fixtures/never-ready.worker.mjs', import.meta.url) };
  const limits = {
    size: 1,
    timeoutMs: 300,
    wallTimeoutMs: 5_000,
    memoryMb: 64,
    recycleAboveMb: 100,
    residentLimitMb: 400,
  };
  let pool: WorkerPool;
  afterEach(() => pool.close());

  // The wall-clock backstop is generous here: in a full-suite run, the worker's 800 ms of loading took
  // over 5 s of wall-clock time once (starved), which is the backstop doing its job, not this test's subject.
  it('does not count the CPU a fresh worker spends loading against its first task', async () => {
    pool = new WorkerPool(slowStart, { ...limits, wallTimeoutMs: 40_000 });
    await expect(pool.run('first')).resolves.toEqual({ echoed: 'first' });
    await expect(pool.run('second')).resolves.toEqual({ echoed: 'second' });
  }, 60_000);

  it('a worker that never gets ready starves its task at the wall-clock limit: a retry, not a refusal', async () => {
    pool = new WorkerPool(neverReady, { ...limits, wallTimeoutMs: 1_000 });
    const started = Date.now();
    const outcome = pool.run('first');
    await expect(outcome).rejects.toBeInstanceOf(WorkerTimeoutError);
    await expect(outcome).rejects.toMatchObject({ starved: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });
});
