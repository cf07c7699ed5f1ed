import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/env.schema.js';
import { entities } from './entities.js';
import { startEmbeddedStore } from './embedded-store.js';
import { migrations } from './migrations/index.js';
import { installPgTypeParsers } from './pg-types.js';
import { TYPEORM_SLOW_QUERY_MS, TypeOrmLogger } from '../observability/typeorm-logger.js';

/** Where the service's data lives: a PostgreSQL URL, and whether it is the in-process embedded store. */
export interface DatabaseTarget {
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

export async function openDatabaseTarget(config: AppConfig): Promise<DatabaseTarget> {
  installPgTypeParsers();
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: false, close: async () => {} };
  // The key cache's LISTEN connection needs one slot beyond TypeORM's pool.
  const store = await startEmbeddedStore(config.DATA_DIR, config.DATABASE_POOL_SIZE + 2);
  return { url: store.url, embedded: true, close: () => store.close() };
}

export function dataSourceOptions(config: AppConfig, target: Pick<DatabaseTarget, 'url'>): DataSourceOptions {
  return {
    type: 'postgres',
    url: target.url,
    entities,
    migrations,
    migrationsRun: config.MIGRATIONS_RUN,
    migrationsTransactionMode: 'each',
    synchronize: false,
    poolSize: config.DATABASE_POOL_SIZE,
    // Fail fast while the database is unreachable instead of queueing requests behind it.
    extra: { connectionTimeoutMillis: 3000, query_timeout: 15_000 },
    logging: ['error', 'warn', 'migration'],
    logger: new TypeOrmLogger(),
    maxQueryExecutionTime: TYPEORM_SLOW_QUERY_MS,
  };
}
