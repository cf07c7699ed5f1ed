import { DataSource } from 'typeorm';
import { sleep, until } from '../support/core.js';
import { startTestApp, type TestApp } from '../support/app.js';

/** The service's connections to its database by application_name, as an operator sees them. */
async function connectionsByName(test: TestApp): Promise<Record<string, number>> {
  const { rows } = await test.db.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'knowledge-query-service%' GROUP BY 1`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.n]));
}

// A connection opened while a request waits costs that request a backend's start-up (16-35 ms on a busy
// server): the pools open theirs once and keep them, rather than closing them after 10 s idle.
describe('the connection pools keep their connections, each named for its job', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({ SEARCHES_AT_ONCE: '3', DATABASE_POOL_SIZE: '6' });
  });
  afterAll(() => test.close());

  it('opens the search pool ahead, grows the main pool on demand, and keeps both past the idle timeout', async () => {
    // The search pool's 2 × SEARCHES_AT_ONCE are opened at start-up, before any search.
    await until(async () => (await connectionsByName(test))['knowledge-query-service search'] === 6, 5_000);
    // The main pool grows to what it is asked for at once.
    const main = test.app.get(DataSource);
    await Promise.all(Array.from({ length: 6 }, () => main.query('SELECT pg_sleep(0.3)')));
    const expected = {
      'knowledge-query-service': 6,
      'knowledge-query-service search': 6,
      'knowledge-query-service readiness': 1,
      'knowledge-query-service listener': 1,
    };
    expect(await connectionsByName(test)).toEqual(expected);
    // pg closes a connection idle for 10 s unless the pool keeps it.
    await sleep(11_000);
    expect(await connectionsByName(test)).toEqual(expected);
  }, 30_000);
});
