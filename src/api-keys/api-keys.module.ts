import { Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-key-authenticator.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { KeyChangeListener } from './key-change-listener.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { VerifiedKeyCache } from './verified-key-cache.js';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeyAuthenticator, VerifiedKeyCache, KeyChangeListener, LastUsedRecorder],
  exports: [ApiKeyAuthenticator],
})
export class ApiKeysModule {}
