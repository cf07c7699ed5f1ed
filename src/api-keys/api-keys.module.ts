import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CollectionsModule } from '../collections/collections.module.js';
import { ApiKeyAuthenticator } from './api-key-authenticator.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { KeyChangeListener } from './key-change-listener.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { VerifiedKeyCache } from './verified-key-cache.js';
import { ApiKey } from './api-key.entity.js';
import { ApiKeyEvent } from './api-key-event.entity.js';
import { ApiKeyEventsRepository } from './api-key-events.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKey, ApiKeyEvent]), CollectionsModule],
  controllers: [ApiKeysController],
  providers: [
    ApiKeysService,
    ApiKeysRepository,
    ApiKeyEventsRepository,
    ApiKeyAuthenticator,
    VerifiedKeyCache,
    KeyChangeListener,
    LastUsedRecorder,
  ],
  exports: [ApiKeyAuthenticator, KeyChangeListener, ApiKeysService],
})
export class ApiKeysModule {}
