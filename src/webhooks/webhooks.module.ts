import { Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { DeliveryQueue } from './delivery-queue.js';
import { DeliveryWorker, WEBHOOK_SECRET_BOX } from './delivery-worker.js';
import { WebhookPurger } from './webhook-purger.js';
import { resolveSecretKey, SecretBox } from './webhook-secrets.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks: endpoints (the API), the outbox (written by triggers, see the Webhooks migration), the
 * delivery queue and this instance's delivery workers.
 */
@Module({
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    WebhooksService,
    DeliveryQueue,
    DeliveryWorker,
    WebhookPurger,
    {
      provide: WEBHOOK_SECRET_BOX,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new SecretBox(resolveSecretKey(config)),
    },
  ],
  exports: [DeliveryWorker],
})
export class WebhooksModule {}
