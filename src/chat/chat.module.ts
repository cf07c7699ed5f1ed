import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { QueryModule } from '../query/query.module.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';

@Module({
  imports: [BillingModule, QueryModule],
  controllers: [ChatController],
  providers: [ChatService],
})
export class ChatModule {}
