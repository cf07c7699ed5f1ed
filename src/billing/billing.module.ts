import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingController } from './billing.controller.js';
import { QuotaService } from './quota.service.js';
import { Subscription } from './subscription.entity.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { UsageEvent } from './usage-event.entity.js';
import { UsageEventsRepository } from './usage-events.repository.js';
import { UsageService } from './usage.service.js';

/** Subscriptions, the monthly credit quota, and the usage ledger. */
@Module({
  imports: [TypeOrmModule.forFeature([Subscription, UsageEvent])],
  controllers: [BillingController],
  providers: [QuotaService, UsageService, SubscriptionsRepository, UsageEventsRepository],
  exports: [QuotaService],
})
export class BillingModule {}
