import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';

const BATCH = 1_000;

/**
 * Deletes expired rows every `intervalMs` on every instance, in small batches until none is left, so
 * that it keeps up with any inflow (a cap per run let a flood outgrow it). A run never overlaps the
 * previous one; the repository's batch skips rows another instance is deleting rather than waiting.
 */
export abstract class PeriodicPurge implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(this.constructor.name);
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = false;

  /** What is purged, for the log (`refresh-token`, `idempotency-key`). */
  protected abstract readonly what: string;
  /** How often a run starts. */
  protected abstract readonly intervalMs: number;

  /** Deletes up to `limit` expired rows; answers how many. */
  protected abstract deleteBatch(limit: number): Promise<number>;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`${this.what} purge failed: ${(error as Error).message}`),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  /** Deletes every expired row, BATCH at a time; answers how many. */
  async purgeExpired(): Promise<number> {
    this.running = true;
    try {
      let total = 0;
      for (;;) {
        const deleted = await this.deleteBatch(BATCH);
        total += deleted;
        if (deleted < BATCH || this.stopped) return total;
      }
    } finally {
      this.running = false;
    }
  }
}
