import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';

const INTERVAL_MS = 60 * 60_000;
const BATCH = 1_000;
const MAX_BATCHES = 20;

/**
 * Deletes refresh-token rows past their expiry (an expired token fails its signature check, so its row
 * serves nothing), once an hour on every instance. Bounded: small batches, a cap per run, and rows
 * another instance is deleting are skipped rather than waited for.
 */
@Injectable()
export class RefreshTokenPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RefreshTokenPurger.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly tokens: RefreshTokensRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.purgeExpired().catch((error: unknown) =>
        this.logger.warn(`refresh-token purge failed: ${(error as Error).message}`),
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
      const deleted = await this.tokens.deleteExpired(BATCH);
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  }
}
