import { Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/hourly-purge.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** Idempotency keys past their 24 hours: an expired row is never replayed, only taken over. */
@Injectable()
export class IdempotencyKeyPurger extends HourlyPurge {
  protected readonly what = 'idempotency-key';

  constructor(private readonly keys: IdempotencyKeysRepository) {
    super();
  }

  protected deleteBatch(limit: number): Promise<number> {
    return this.keys.deleteExpired(limit);
  }
}
