import pg from 'pg';
import type { DataSource, Migration } from 'typeorm';
import { connectionName, type DatabaseTarget } from './database.js';
import { isDeadlock } from './pg-errors.js';

/** Arbitrary, fixed: the advisory-lock key every instance of this service takes to migrate. */
const MIGRATION_LOCK_KEY = 7_463_700_000_001;

/** Attempts of one migration step that PostgreSQL fails to break a deadlock. */
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs `step` (migrations run or undone, each in its own transaction) again when PostgreSQL failed it to
 * break a deadlock: a migration's DDL locks its tables one by one, and a statement of a running instance
 * (a worker's poll, a request) that reads them in the other order closes the cycle. The failed
 * migration was rolled back, so the next attempt starts from it.
 */
export async function retryingDeadlocks<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isDeadlock(error) || attempt === DEADLOCK_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * Runs pending migrations, one instance at a time. TypeORM takes no lock of its own: replicas booting
 * together on a fresh database would run the same migration twice (a DDL one fails one boot; a data
 * one would apply twice). A session advisory lock on a dedicated connection serializes them; the
 * embedded store belongs to one process and needs none.
 */
export async function runMigrationsExclusively(
  dataSource: DataSource,
  target: Pick<DatabaseTarget, 'url' | 'embedded'>,
  /** DATABASE_CONNECT_TIMEOUT_MS: how long the lock's connection may take to open. */
  connectTimeoutMs: number,
): Promise<Migration[]> {
  const migrate = () => retryingDeadlocks(() => dataSource.runMigrations({ transaction: 'each' }));
  if (target.embedded) return migrate();
  const lock = new pg.Client({
    connectionString: target.url,
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: connectionName('migrations'),
  });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await migrate();
  } finally {
    // Ending the session releases the lock even if the unlock itself fails.
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end().catch(() => undefined);
  }
}
