import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/env.schema.js';
import { type DatabaseTarget, dataSourceOptions } from './database.js';
import { runMigrationsExclusively } from './run-migrations.js';

export const DATABASE_TARGET = Symbol('DATABASE_TARGET');

/** TypeORM over `pg`, pointed at the configured server or the embedded store opened before boot. */
@Global()
@Module({})
export class DatabaseModule {
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
            const dataSource = await new DataSource(options!).initialize();
            try {
              if (config.MIGRATIONS_RUN) await runMigrationsExclusively(dataSource, target);
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        }),
      ],
      providers: [{ provide: DATABASE_TARGET, useValue: target }],
      exports: [DATABASE_TARGET],
    };
  }
}
