import { Logger } from '@nestjs/common';
import type { Logger as OrmLogger } from 'typeorm';

const SLOW_QUERY_MS = 1_000;

/**
 * TypeORM's messages in the service's JSON log instead of on the console. Query parameters are
 * never logged: they can hold e-mail addresses, password hashes or key hashes. Only failures, slow
 * queries, migrations and warnings are written; routine queries are not.
 */
export class TypeOrmLogger implements OrmLogger {
  private readonly logger = new Logger('TypeORM');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    const message = typeof error === 'string' ? error : error.message;
    this.logger.warn(`query failed: ${message}; query: ${oneLine(query)}`);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query (${time} ms): ${oneLine(query)}`);
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
    else this.logger.log(String(message));
  }
}

export const TYPEORM_SLOW_QUERY_MS = SLOW_QUERY_MS;

function oneLine(query: string): string {
  return query.replace(/\s+/g, ' ').slice(0, 500);
}
