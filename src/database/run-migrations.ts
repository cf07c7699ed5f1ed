import pg from 'pg';
import type { DataSource, Migration } from 'typeorm';
import type { DatabaseTarget } from './database.js';

/** Arbitrary, fixed: the advisory-lock key every instance of this service takes to migrate. */
const MIGRATION_LOCK_KEY = 7_463_700_000_001;

/**
 * Runs pending migrations, one instance at a time. TypeORM takes no lock of its own: replicas booting
 * together on a fresh database would run the same migration twice (a DDL one fails one boot; a data
 * one would apply twice). A session advisory lock on a dedicated connection serializes them; the
 * embedded store belongs to one process and needs none.
 */
export async function runMigrationsExclusively(
  dataSource: DataSource,
  target: Pick<DatabaseTarget, 'url' | 'embedded'>,
): Promise<Migration[]> {
  const migrate = () => dataSource.runMigrations({ transaction: 'each' });
  if (target.embedded) return migrate();
  const lock = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: 3000 });
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
