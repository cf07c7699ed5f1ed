import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/env.schema.js';
import { READINESS_CONNECTION } from '../lifecycle/readiness-connection.js';
import { type DatabaseTarget, dataSourceOptions, readinessDataSourceOptions, searchPoolOptions } from './database.js';
import { DirectReads } from './direct-reads.js';
import { runMigrationsExclusively } from './run-migrations.js';

export const DATABASE_TARGET = Symbol('DATABASE_TARGET');

/** A ping gets two seconds to answer; so does each attempt at opening readiness's connection. */
const READINESS_TIMEOUT_MS = 2_000;

/** Between two attempts: an error that comes at once (a refused connection) is not retried in a tight loop. */
const RETRY_PAUSE_MS = 100;

/**
 * Opens a connection, trying again until `withinMs` have passed since the first attempt: at boot, a
 * backend that takes over the ping's two seconds to start (seen on a loaded 2-core CI machine) must
 * not fail the boot when the main pool was given DATABASE_CONNECT_TIMEOUT_MS.
 */
export async function openWithin<T>(open: () => Promise<T>, withinMs: number, now = Date.now): Promise<T> {
  const deadline = now() + withinMs;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (now() >= deadline) throw error;
      await sleep(RETRY_PAUSE_MS);
    }
  }
}

/** TypeORM over `pg`, pointed at the configured server or the embedded store opened before boot. */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(getDataSourceToken()) private readonly main: DataSource,
    @Inject(READINESS_CONNECTION) private readonly readinessConnection: DataSource,
    private readonly reads: DirectReads,
  ) {}

  static forRoot(config: AppConfig, target: DatabaseTarget): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // Each feature registers its own entities (TypeOrmModule.forFeature); no central list.
          useFactory: () => ({
            ...dataSourceOptions(config, target),
            autoLoadEntities: true,
            migrationsRun: false,
            retryAttempts: 3,
            retryDelay: 1000,
          }),
          // Migrations run here rather than through `migrationsRun`, so that they hold the migration lock.
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('TypeORM passed no data source options');
            const dataSource = await new DataSource(options).initialize();
            try {
              if (config.MIGRATIONS_RUN)
                await runMigrationsExclusively(dataSource, target, config.DATABASE_CONNECT_TIMEOUT_MS);
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        }),
      ],
      providers: [
        { provide: DATABASE_TARGET, useValue: target },
        {
          provide: DirectReads,
          inject: [getDataSourceToken()],
          // The search pool (searchPoolOptions); on the embedded store, its one connection (EMBEDDED_POOL_SIZE).
          useFactory: (main: DataSource) =>
            target.embedded
              ? DirectReads.throughTypeOrm(main)
              : DirectReads.ownPool(searchPoolOptions(config, target), main.logger),
        },
        {
          provide: READINESS_CONNECTION,
          inject: [getDataSourceToken()],
          // Opened after the main one (which waited for the database); pg reconnects it after an outage.
          useFactory: async (main: DataSource) =>
            target.embedded
              ? main
              : await openWithin(
                  () => new DataSource(readinessDataSourceOptions(target, READINESS_TIMEOUT_MS)).initialize(),
                  config.DATABASE_CONNECT_TIMEOUT_MS,
                ),
        },
      ],
      exports: [DATABASE_TARGET, READINESS_CONNECTION, DirectReads],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.reads.close();
    if (this.readinessConnection !== this.main && this.readinessConnection.isInitialized)
      await this.readinessConnection.destroy();
  }
}
