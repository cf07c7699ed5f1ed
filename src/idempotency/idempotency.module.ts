import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeyPurger } from './idempotency-key-purger.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on every authenticated POST (contract, "Idempotent POSTs"); global so the
 * streamed query can store its final answer.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    IdempotencyService,
    IdempotencyKeysRepository,
    IdempotencyKeyPurger,
  ],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
