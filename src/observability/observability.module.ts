import { type DynamicModule, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/env.schema.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsServer } from './metrics-server.js';
import { type PoolLike, watchDatabasePool } from './metrics.js';

/**
 * GET /metrics, and the database pool gauges read from TypeORM's `pg` pool at scrape time. With
 * METRICS_PORT set, /metrics is served on that port only (and is absent from the public one).
 */
@Module({})
export class ObservabilityModule implements OnModuleInit, OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.METRICS_PORT === undefined) return { module: ObservabilityModule, controllers: [MetricsController] };
    const port = config.METRICS_PORT;
    return {
      module: ObservabilityModule,
      providers: [{ provide: MetricsServer, useFactory: () => new MetricsServer(port) }],
    };
  }

  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    watchDatabasePool(() => (this.dataSource.driver as unknown as { master?: PoolLike }).master ?? null);
  }

  onApplicationShutdown(): void {
    watchDatabasePool(null);
  }
}
