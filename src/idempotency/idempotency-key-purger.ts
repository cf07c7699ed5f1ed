import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

const INTERVAL_MS = 60 * 60_000;
const BATCH = 1_000;
const MAX_BATCHES = 20;

/**
 * Deletes idempotency keys past their 24 hours (an expired row is never replayed, only taken over), once
 * an hour on every instance. Bounded: small batches, a cap per run, rows another instance is deleting
 * skipped.
 */
@Injectable()
export class IdempotencyKeyPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdempotencyKeyPurger.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly keys: IdempotencyKeysRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`idempotency-key purge failed: ${(error as Error).message}`),
      );
    }, INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Deletes up to MAX_BATCHES × BATCH expired rows; answers how many. */
  async purgeExpired(): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const deleted = await this.keys.deleteExpired(BATCH);
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  }
}
