import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';

const INTERVAL_MS = 60 * 60_000;
const BATCH = 1_000;
const MAX_BATCHES = 20;

/**
 * Deletes expired rows once an hour on every instance. Bounded: small batches, a cap per run; the
 * repository's batch skips rows another instance is deleting rather than waiting for them.
 */
export abstract class HourlyPurge implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(this.constructor.name);
  private timer: NodeJS.Timeout | null = null;

  /** What is purged, for the log (`refresh-token`, `idempotency-key`). */
  protected abstract readonly what: string;

  /** Deletes up to `limit` expired rows; answers how many. */
  protected abstract deleteBatch(limit: number): Promise<number>;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`${this.what} purge failed: ${(error as Error).message}`),
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
      const deleted = await this.deleteBatch(BATCH);
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  }
}
