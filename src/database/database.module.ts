import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/env.schema.js';
import { type DatabaseTarget, dataSourceOptions } from './database.js';

export const DATABASE_TARGET = Symbol('DATABASE_TARGET');

/** TypeORM over `pg`, pointed at the configured server or the embedded store opened before boot. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig, target: DatabaseTarget): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(config, target), retryAttempts: 3, retryDelay: 1000 })],
      providers: [{ provide: DATABASE_TARGET, useValue: target }],
      exports: [DATABASE_TARGET],
    };
  }
}
