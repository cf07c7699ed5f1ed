import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingModule } from '../billing/billing.module.js';
import { QueryModule } from '../query/query.module.js';
import { ChatController } from './chat.controller.js';
import { ChatRepository } from './chat.repository.js';
import { ChatService } from './chat.service.js';
import { ChatMessage } from './chat-message.entity.js';
import { ChatSession } from './chat-session.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([ChatMessage, ChatSession]), BillingModule, QueryModule],
  controllers: [ChatController],
  providers: [ChatService, ChatRepository],
})
export class ChatModule {}
