import pg from 'pg';
import { TYPEORM_SLOW_QUERY_MS } from '../observability/typeorm-logger.js';

/**
 * A read-only statement. With a name, each connection parses and plans it once (a prepared statement):
 * for statements whose best plan does not depend on the values. Without one, it is planned for each
 * run's values.
 */
export interface ReadStatement {
  /** Unique in the service: PostgreSQL keys a connection's prepared statements by name. */
  name?: string;
  text: string;
}

/** A connection taken from the pool: `pg`'s PoolClient. */
export interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  /** With an error, the connection is closed rather than reused. */
  release(error?: Error): void;
}

/** What hands out connections: `pg`'s Pool. */
export interface PgPool {
  connect(): Promise<PgClient>;
}

/** What runs it through TypeORM: its DataSource (or anything answering a SELECT with its rows). */
export interface SqlRunner {
  query(sql: string, values: unknown[]): Promise<unknown>;
}

/** Where a slow or failed statement is reported: TypeORM's logger, as for every other statement. */
export interface StatementLog {
  logQuerySlow(time: number, query: string): unknown;
  logQueryError(error: string | Error, query: string): unknown;
}

/** StatementLog, and where a lost idle connection is told (TypeORM's logger has both). */
export interface PoolLog extends StatementLog {
  log?(level: 'warn', message: unknown): unknown;
}

/**
 * Runs the reads made on every query (the search plan's term statistics, the ranking, the sources'
 * snippets) straight on `pg`'s pool, the named ones as prepared statements. Parsing and planning were
 * half the time of the statistics statement (0.71-0.88 ms unprepared against 0.26-0.33 ms prepared),
 * and TypeORM's DataSource.query builds a query runner per call; neither is needed for a read outside
 * a transaction. Slow and failed statements are still logged through TypeORM's logger.
 *
 * Not on the embedded store (`throughTypeOrm`): its one PGlite session outlives the pooled connection,
 * so after a reconnect `pg` would prepare a name the session already holds. Behind PgBouncer in
 * transaction mode, prepared statements need its `max_prepared_statements` (1.21 and later).
 */
export class DirectReads {
  private constructor(
    private readonly run: (statement: ReadStatement, values: unknown[]) => Promise<unknown[]>,
    /** Closes the pool the reads own (none: they run on someone else's). */
    readonly close: () => Promise<void> = async () => {},
  ) {}

  static over(pool: PgPool, log?: StatementLog): DirectReads {
    return new DirectReads(async (statement, values) => {
      // Timed from when it has a connection, as TypeORM times its own: a wait for the pool is not a
      // slow statement.
      const client = await pool.connect();
      const started = performance.now();
      try {
        const { rows } = await client.query({ ...statement, values });
        client.release();
        return rows;
      } catch (error) {
        // A connection whose statement failed (a timeout, a broken socket) is not handed out again.
        client.release(error as Error);
        log?.logQueryError(error as Error, statement.text);
        throw error;
      } finally {
        const ms = Math.round(performance.now() - started);
        if (ms > TYPEORM_SLOW_QUERY_MS) log?.logQuerySlow(ms, statement.text);
      }
    });
  }

  /**
   * On a pool of their own (`pg`'s Pool with `options`), closed by `close()`: the search pool, so that
   * searches and the other statements never wait for each other's connections.
   */
  static ownPool(options: pg.PoolConfig, log?: PoolLog): DirectReads {
    const pool = new pg.Pool(options);
    // An idle connection that breaks (the server restarted) is dropped by the pool; without a listener
    // the 'error' event would end the process.
    pool.on('error', (error) => log?.log?.('warn', `search pool: idle connection lost: ${error.message}`));
    DirectReads.openAhead(pool, options.min ?? 0);
    const over = DirectReads.over(pool, log);
    return new DirectReads(over.run, () => pool.end());
  }

  /**
   * Opens the pool's `count` kept connections now, in the background: opened on demand, the search that
   * found all the others taken waited 16-35 ms for its own under a flood (see KEEP_CONNECTIONS in
   * database.ts). Best effort: a connection that cannot be opened now is opened when first needed.
   */
  private static openAhead(pool: pg.Pool, count: number): void {
    for (let i = 0; i < count; i++)
      pool.connect().then(
        (client) => client.release(),
        () => undefined,
      );
  }

  static throughTypeOrm(runner: SqlRunner): DirectReads {
    return new DirectReads(async (statement, values) => (await runner.query(statement.text, values)) as unknown[]);
  }

  query<Row>(statement: ReadStatement, values: unknown[]): Promise<Row[]> {
    return this.run(statement, values) as Promise<Row[]>;
  }
}
