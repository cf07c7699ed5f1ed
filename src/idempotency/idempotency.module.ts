import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeyPurger } from './idempotency-key-purger.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyGuard } from './idempotency.guard.js';
import { IdempotencyService, IdempotentStreams } from './idempotency.service.js';

/**
 * `Idempotency-Key` on every authenticated POST (contract, "Idempotent POSTs"), owned by
 * IdempotencyService; request-pipeline.ts installs its guard and `onSend` hook. Global so the streaming
 * controllers can settle their answers through `IdempotentStreams`.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [
    IdempotencyService,
    { provide: IdempotentStreams, useExisting: IdempotencyService },
    IdempotencyGuard,
    IdempotencyKeysRepository,
    IdempotencyKeyPurger,
  ],
  exports: [IdempotentStreams],
})
export class IdempotencyModule {}
