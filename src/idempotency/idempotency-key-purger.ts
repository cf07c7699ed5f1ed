import { Injectable } from '@nestjs/common';
import { PeriodicPurge } from '../common/periodic-purge.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/**
 * Idempotency keys past their 24 hours: an expired row is never replayed, only taken over. Every
 * minute, so that an organization's budget is given back soon after its answers expire.
 */
@Injectable()
export class IdempotencyKeyPurger extends PeriodicPurge {
  protected readonly what = 'idempotency-key';
  protected readonly intervalMs = 60_000;

  constructor(private readonly keys: IdempotencyKeysRepository) {
    super();
  }

  protected deleteBatch(limit: number): Promise<number> {
    return this.keys.deleteExpired(limit);
  }
}
