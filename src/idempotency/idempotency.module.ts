import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeyPurger } from './idempotency-key-purger.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on every authenticated POST (contract, "Idempotent POSTs"); global so the
 * streamed query can store its final answer.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [IdempotencyService, IdempotencyKeysRepository, IdempotencyKeyPurger],
  // IdempotencyGuard is installed by the auth module, last of the global guards (it needs the caller).
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
