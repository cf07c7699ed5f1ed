import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfigOrReport } from '../config/env.schema.js';
import { dataSourceOptions, openDatabaseTarget } from './database.js';
import { runMigrationsExclusively } from './run-migrations.js';

/**
 * `npm run migration:run`: applies pending migrations to the configured database (DATABASE_URL, or the
 * embedded store under DATA_DIR) and exits. For deployments that migrate in a separate step and run
 * the service with MIGRATIONS_RUN=false.
 */
async function main(): Promise<number> {
  const config = loadConfigOrReport();
  if (!config) return 1;
  const target = await openDatabaseTarget(config);
  const dataSource = new DataSource({ ...dataSourceOptions(config, target), migrationsRun: false });
  try {
    await dataSource.initialize();
    const ran = await runMigrationsExclusively(dataSource, target, config.DATABASE_CONNECT_TIMEOUT_MS);
    console.log(
      ran.length === 0
        ? 'No pending migrations.'
        : `Ran ${ran.length} migration(s): ${ran.map((m) => m.name).join(', ')}`,
    );
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await target.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
