import { Module } from '@nestjs/common';
import { BillingController } from './billing.controller.js';
import { QuotaService } from './quota.service.js';
import { UsageService } from './usage.service.js';

/** Subscriptions, the monthly credit quota, and the usage ledger. */
@Module({
  controllers: [BillingController],
  providers: [QuotaService, UsageService],
  exports: [QuotaService],
})
export class BillingModule {}
