import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SearchIndexRepository } from '../retrieval/search-index.repository.js';
import { CollectionsRepository } from './collections.repository.js';

/** Documents deleted per transaction: each commits in well under a second, whatever the collection's size. */
export const PURGE_BATCH = 500;
/** Collections marked deleted read at a time. */
const PURGE_COLLECTIONS_BATCH = 100;
/** How often each instance looks for collections left half deleted (by a restart, or another instance). */
const PURGE_INTERVAL_MS = 60_000;

/**
 * Deletes what collections marked deleted hold: their documents a batch per transaction (the chunks by
 * cascade, `document.deleted` events by their trigger, as before), then the statistics and the collection
 * itself, whose cascade takes what came in meanwhile (an attach finishing, an upload that was under way).
 * Woken by each deletion, and every minute for the ones a stopped instance left; any number of instances
 * may purge the same collection (a batch skips the documents another holds).
 */
@Injectable()
export class CollectionPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Collections');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly collections: CollectionsRepository,
    private readonly index: SearchIndexRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), PURGE_INTERVAL_MS);
    this.timer.unref();
    this.wake();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Purges now (after a deletion on this instance). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.purgeAll()
      .catch((error: unknown) => this.logger.warn(`Purging deleted collections failed: ${(error as Error).message}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once no purge runs on this instance (tests wait for it). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Until none is left, a batch of collections at a time (not a batch a minute: a thousand deleted took 10 minutes). */
  private async purgeAll(): Promise<void> {
    for (;;) {
      const batch = await this.collections.deleted(PURGE_COLLECTIONS_BATCH);
      if (batch.length === 0) return;
      for (const id of batch) {
        if (this.stopped) return;
        await this.purge(id);
      }
    }
  }

  private async purge(id: string): Promise<void> {
    while (!this.stopped) {
      const deleted = await this.dataSource.transaction((manager) =>
        this.collections.purgeDocuments(manager, id, PURGE_BATCH),
      );
      if (deleted === 0) break;
    }
    if (this.stopped) return;
    await this.dataSource.transaction(async (manager) => {
      await this.index.dropCorpus(manager, id);
      await this.collections.deleteMarked(manager, id);
    });
  }
}
