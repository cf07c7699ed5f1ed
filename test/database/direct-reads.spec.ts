import pg from 'pg';
import type { AppConfig } from '../../src/config/env.schema.js';
import { STATEMENT_TIMEOUT_MS, searchPoolOptions } from '../../src/database/database.js';
import { DirectReads } from '../../src/database/direct-reads.js';
import { TYPEORM_SLOW_QUERY_MS } from '../../src/observability/typeorm-logger.js';
import { ADMIN_DATABASE_URL } from '../support/database.js';

/** What DirectReads reports, as TypeORM's logger would receive it. */
function recordingLog() {
  const slow: { ms: number; query: string }[] = [];
  const failed: string[] = [];
  return {
    slow,
    failed,
    logQuerySlow: (ms: number, query: string) => slow.push({ ms, query }),
    logQueryError: (error: string | Error, query: string) => failed.push(`${String(error)} in ${query}`),
  };
}

describe('DirectReads on a pg pool', () => {
  // One connection, so that a second statement has to wait for the first.
  const pool = new pg.Pool({ connectionString: ADMIN_DATABASE_URL, max: 1 });
  afterAll(() => pool.end());

  it("reports a statement slower than TypeORM's threshold, and not one that only waited for a connection", async () => {
    const log = recordingLog();
    const reads = DirectReads.over(pool, log);
    const sleepSeconds = (TYPEORM_SLOW_QUERY_MS + 300) / 1000;
    const slow = reads.query({ text: 'SELECT pg_sleep($1::float8) AS slept' }, [sleepSeconds]);
    const waiting = reads.query<{ one: number }>({ name: 'direct_reads_one', text: 'SELECT 1 AS one' }, []);
    expect(await waiting).toEqual([{ one: 1 }]);
    await slow;
    expect(log.slow).toEqual([{ ms: expect.any(Number) as number, query: 'SELECT pg_sleep($1::float8) AS slept' }]);
    expect(log.slow[0].ms).toBeGreaterThanOrEqual(TYPEORM_SLOW_QUERY_MS);
  }, 20_000);

  it('reports a failed statement and does not hand its connection out again', async () => {
    const log = recordingLog();
    const reads = DirectReads.over(pool, log);
    const [{ pid }] = await reads.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' }, []);
    await expect(reads.query({ text: 'SELECT 1 / $1::int' }, [0])).rejects.toThrow('division by zero');
    expect(log.failed).toEqual(['error: division by zero in SELECT 1 / $1::int']);
    const [after] = await reads.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' }, []);
    expect(after.pid).not.toBe(pid);
  });
});

describe('DirectReads on the search pool (its own pg pool)', () => {
  it('holds twice SEARCHES_AT_ONCE connections, with the statement timeout and no JIT, and closes them', async () => {
    const options = searchPoolOptions({ SEARCHES_AT_ONCE: 3 } as AppConfig, { url: ADMIN_DATABASE_URL });
    expect(options).toMatchObject({
      connectionString: ADMIN_DATABASE_URL,
      max: 6,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: STATEMENT_TIMEOUT_MS,
      options: '-c jit=off',
    });
    const reads = DirectReads.ownPool(options, recordingLog());
    const rows = await reads.query<{ jit: string; timeout: string }>(
      { text: "SELECT current_setting('jit') AS jit, current_setting('statement_timeout') AS timeout" },
      [],
    );
    expect(rows).toEqual([{ jit: 'off', timeout: '15s' }]);
    await reads.close();
    await expect(reads.query({ text: 'SELECT 1' }, [])).rejects.toThrow(/after calling end on the pool/);
  });
});
