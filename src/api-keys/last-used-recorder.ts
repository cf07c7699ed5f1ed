import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { ApiKeysRepository } from './api-keys.repository.js';

/**
 * Buffers "key X was used at T" in memory and writes the whole batch in one statement every
 * LAST_USED_FLUSH_MS, so authenticating a request never waits on a write.
 */
@Injectable()
export class LastUsedRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private pending = new Map<string, Date>();
  private lastBatch = new Map<string, Date>();
  private queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.config.LAST_USED_FLUSH_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  touch(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
  }

  /**
   * A use this instance knows of that the database may not show yet: pending, or in the batch being
   * written (a read that races that write would otherwise see neither). Kept until the next flush.
   */
  pendingFor(keyId: string): Date | undefined {
    return this.pending.get(keyId) ?? this.lastBatch.get(keyId);
  }

  /**
   * Writes what is pending. One write at a time: a caller arriving while the timer's write is in
   * flight waits for it, so `await flush()` (shutdown, tests) means every stamp so far is stored.
   */
  flush(): Promise<void> {
    const next = this.queue.then(() => this.write());
    this.queue = next;
    return next;
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.lastBatch = batch;
    if (batch.size === 0) return;
    try {
      await this.keys.recordLastUse(batch);
    } catch (error) {
      // Keep the stamps for the next attempt, unless a newer use replaced them meanwhile.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.logger.warn(`could not record key use: ${(error as Error).message}`);
    }
  }
}
