import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicPurge } from '../common/periodic-purge.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/**
 * Events older than WEBHOOK_RETENTION_DAYS whose deliveries are all settled go, with their deliveries;
 * once-only marks older than 62 days go too (the longest they matter is a month's period).
 */
@Injectable()
export class WebhookPurger extends PeriodicPurge {
  protected readonly what = 'webhook-event';
  protected readonly intervalMs = 60 * 60 * 1000;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  protected async deleteBatch(limit: number): Promise<number> {
    const [, deleted]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT e.id FROM webhook_events e
          WHERE e.created_at < now() - $2 * interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                             WHERE d.event_id = e.id AND d.status IN ('pending', 'sending'))
          LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit, this.config.WEBHOOK_RETENTION_DAYS],
    );
    await this.dataSource.query(
      `DELETE FROM webhook_event_marks WHERE mark IN (
         SELECT mark FROM webhook_event_marks WHERE created_at < now() - interval '62 days' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit],
    );
    return deleted;
  }
}
