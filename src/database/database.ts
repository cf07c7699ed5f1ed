import type { PoolConfig } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/env.schema.js';
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
  // TypeORM's one connection (see EMBEDDED_POOL_SIZE), plus spares for the migration and CLI tools.
  const store = await startEmbeddedStore(config.DATA_DIR, EMBEDDED_POOL_SIZE + 2);
  return { url: store.url, embedded: true, close: () => store.close() };
}

/**
 * The embedded store gets one pooled connection. PGlite is a single session, and pglite-socket queues
 * each protocol message (Parse, Bind, Execute, Sync) on its own, so two connections' extended-protocol
 * messages interleave: one's unnamed statement replaces another's between Bind and Execute. Measured
 * with 60 concurrent mixed requests: pool of 10, 12 answers of 500, 4 spurious 404s, 3 wrong 402s in
 * 30 s; pool of 1, all 60 right in 0.7 s. It costs nothing, since PGlite runs one query at a time anyway.
 */
export const EMBEDDED_POOL_SIZE = 1;
/** Waiting for that one connection is queueing, not an outage: allow a burst to drain. */
const EMBEDDED_ACQUIRE_TIMEOUT_MS = 30_000;

/*
 * KEEP_CONNECTIONS: both pools keep every connection they open (`min` = their size; pg closes idle ones
 * after 10 s otherwise). A connection opened while requests wait costs the request that needed it
 * 20-35 ms on a busy server (a backend started, authenticated, set up), and under a flood the searches
 * and reads that found every open connection taken paid it: 7 of a quiet tenant's 500 searches, its
 * whole p99 (docs/BENCHMARKS.md, "Connections kept"). Fixed-size pools are the usual advice for this.
 */

/**
 * How each of the service's connections names itself to the server (`application_name`, seen in
 * pg_stat_activity and the server's log): the pool's, and those with a job of their own.
 */
export const connectionName = (job?: 'search' | 'readiness' | 'listener' | 'migrations') =>
  job ? `knowledge-query-service ${job}` : 'knowledge-query-service';

/** The longest any one SQL statement may run. */
export const STATEMENT_TIMEOUT_MS = 15_000;

export function dataSourceOptions(
  config: AppConfig,
  target: Pick<DatabaseTarget, 'url' | 'embedded'>,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: target.url,
    migrations,
    migrationsRun: config.MIGRATIONS_RUN,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // The migrations need no extension (ids come from gen_random_uuid(), built into PostgreSQL 13+).
    // Left on, TypeORM tries `CREATE EXTENSION "uuid-ossp"` at every boot and warns, with nothing to
    // act on, where it is not available (the embedded store, a managed server without superuser).
    installExtensions: false,
    applicationName: connectionName(),
    poolSize: target.embedded ? EMBEDDED_POOL_SIZE : config.DATABASE_POOL_SIZE,
    // Fail fast while the database is unreachable instead of queueing requests behind it. A statement
    // gets 15 s: pg gives up waiting then (query_timeout), and the server stops running it too
    // (statement_timeout), so an abandoned statement holds no connection or lock behind the client's back.
    extra: {
      min: target.embedded ? EMBEDDED_POOL_SIZE : config.DATABASE_POOL_SIZE, // see KEEP_CONNECTIONS
      connectionTimeoutMillis: target.embedded ? EMBEDDED_ACQUIRE_TIMEOUT_MS : config.DATABASE_CONNECT_TIMEOUT_MS,
      query_timeout: STATEMENT_TIMEOUT_MS,
      // The embedded store runs one backend in WASM, with no timer to interrupt it: the client's limit only.
      // No JIT: the ranking statement is planned for each query, and at a million chunks its estimated
      // cost made PostgreSQL compile it every time, which took longer than running it (see
      // docs/BENCHMARKS.md, "How search cost grows"). The embedded store has no JIT.
      ...(target.embedded ? {} : { statement_timeout: STATEMENT_TIMEOUT_MS, options: '-c jit=off' }),
    },
    logging: ['error', 'warn', 'migration'],
    logger: new TypeOrmLogger(),
    maxQueryExecutionTime: TYPEORM_SLOW_QUERY_MS,
  };
}

/**
 * The search pool's connections (see DirectReads.ownPool): as many as SearchGate lets run (twice
 * SEARCHES_AT_ONCE, with the turns kept for first searches), apart from
 * TypeORM's pool, so that the searches SearchGate lets run never take a connection a document read
 * or a write is waiting for. The same limits as TypeORM's connections (statement timeout, no JIT).
 */
export function searchPoolOptions(config: AppConfig, target: Pick<DatabaseTarget, 'url'>): PoolConfig {
  return {
    connectionString: target.url,
    max: 2 * config.SEARCHES_AT_ONCE,
    min: 2 * config.SEARCHES_AT_ONCE, // see KEEP_CONNECTIONS
    application_name: connectionName('search'),
    connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    options: '-c jit=off',
  };
}

/**
 * Readiness's own single connection to the server (see lifecycle/readiness-connection.ts). Not for the
 * embedded store: a second session's simple query between another's Bind and Execute would drop that
 * one's unnamed statement (see EMBEDDED_POOL_SIZE), so there readiness shares the one connection.
 */
export function readinessDataSourceOptions(
  target: Pick<DatabaseTarget, 'url'>,
  pingTimeoutMs: number,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: target.url,
    applicationName: connectionName('readiness'),
    poolSize: 1,
    extra: {
      min: 1, // kept (see KEEP_CONNECTIONS): probes come every 10 s or so, pg's idle timeout is 10 s
      connectionTimeoutMillis: pingTimeoutMs,
      query_timeout: pingTimeoutMs,
      statement_timeout: pingTimeoutMs,
    },
    logging: false,
  };
}
