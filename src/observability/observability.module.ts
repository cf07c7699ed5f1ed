import { Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MetricsController } from './metrics.controller.js';
import { type PoolLike, watchDatabasePool } from './metrics.js';

/** GET /metrics, and the database pool gauges read from TypeORM's `pg` pool at scrape time. */
@Module({ controllers: [MetricsController] })
export class ObservabilityModule implements OnModuleInit, OnApplicationShutdown {
  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    watchDatabasePool(() => (this.dataSource.driver as unknown as { master?: PoolLike }).master ?? null);
  }

  onApplicationShutdown(): void {
    watchDatabasePool(null);
  }
}
