import type pg from 'pg';
import { retryingDeadlocks } from '../../src/database/run-migrations.js';
import { connect, createTestDatabase, type TestDatabase } from '../support/database.js';

// What a migration meets while another instance runs: its transaction locks a table, the other's statement
// holds a second one and waits for the first, and the migration then wants the second. PostgreSQL fails one.
describe('retryingDeadlocks (migrations at boot, and undone in tests)', () => {
  let database: TestDatabase;
  let migrating: pg.Client;
  let running: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    migrating = await connect(database.url);
    running = await connect(database.url);
    await migrating.query(`CREATE TABLE first_table (n int); CREATE TABLE second_table (n int)`);
    // The migration detects the cycle first, so it is the one failed.
    await migrating.query(`SET deadlock_timeout = '50ms'`);
    await running.query(`SET deadlock_timeout = '5s'`);
  });
  afterAll(async () => {
    await migrating.end();
    await running.end();
    await database.drop();
  });

  /** A "migration" that deadlocks with the running instance on its first `deadlocks` attempts. */
  const migration = (attempts: { n: number }, deadlocks: number) => async () => {
    attempts.n++;
    let other: Promise<unknown> | undefined;
    await migrating.query('BEGIN');
    try {
      await migrating.query('LOCK TABLE first_table IN ACCESS EXCLUSIVE MODE');
      if (attempts.n <= deadlocks) {
        await running.query('BEGIN');
        await running.query('LOCK TABLE second_table IN ACCESS SHARE MODE');
        other = running.query('SELECT count(*) FROM first_table');
        await new Promise((resolve) => setTimeout(resolve, 100)); // it now waits for first_table
      }
      await migrating.query('ALTER TABLE second_table ADD COLUMN IF NOT EXISTS m int');
      await migrating.query('COMMIT');
      return 'migrated';
    } catch (error) {
      await migrating.query('ROLLBACK');
      throw error;
    } finally {
      if (other) {
        await other;
        await running.query('COMMIT');
      }
    }
  };

  it('runs a step again that PostgreSQL failed to break a deadlock', async () => {
    const attempts = { n: 0 };
    await expect(retryingDeadlocks(migration(attempts, 1))).resolves.toBe('migrated');
    expect(attempts.n).toBe(2);
    const columns = await migrating.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'second_table' ORDER BY 1`,
    );
    expect(columns.rows).toEqual([{ column_name: 'm' }, { column_name: 'n' }]);
  });

  it('gives up after 5 attempts, and passes any other error on at once', async () => {
    const attempts = { n: 0 };
    await expect(retryingDeadlocks(migration(attempts, 99))).rejects.toMatchObject({ code: '40P01' });
    expect(attempts.n).toBe(5);
    let other = 0;
    await expect(
      retryingDeadlocks(() => {
        other++;
        return migrating.query('SELECT * FROM missing_table');
      }),
    ).rejects.toMatchObject({ code: '42P01' });
    expect(other).toBe(1);
  });
});
