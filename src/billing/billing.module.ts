import { Module } from '@nestjs/common';

/** Subscriptions, quota and the usage ledger (the knowledge half fills this in). */
@Module({})
export class BillingModule {}
