import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { webhookDeliveries } from '../observability/metrics.js';
import { type AttemptOutcome, type ClaimedDelivery, DeliveryQueue } from './delivery-queue.js';
import { retryDelayMs } from './webhook-events.js';
import { type SecretBox, signatureHeader } from './webhook-secrets.js';
import { WebhookSender } from './webhook-sender.js';

export const WEBHOOK_SECRET_BOX = Symbol('WEBHOOK_SECRET_BOX');

/** How often each instance looks for keys entering their expiry windows (the contract allows a minute). */
const EXPIRY_SCAN_MS = 20_000;

/**
 * This instance's delivery workers: every WEBHOOK_POLL_INTERVAL_MS it claims as many due deliveries as
 * it has free slots (WEBHOOK_DELIVERY_CONCURRENCY), sends them, and records each outcome. Claims are
 * leases in the database, so any number of instances share the queue and a restart loses nothing.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly sender: WebhookSender;
  private readonly inFlight = new Set<Promise<void>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  private polling = false;
  /** The last claim filled every free slot. */
  private backlog = false;
  private stopped = false;

  constructor(
    private readonly queue: DeliveryQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_SECRET_BOX) private readonly secrets: SecretBox,
  ) {
    this.sender = new WebhookSender({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.WEBHOOK_DELIVERY_CONCURRENCY === 0) return;
    this.pollTimer = setInterval(() => void this.poll(), this.config.WEBHOOK_POLL_INTERVAL_MS);
    this.pollTimer.unref();
    this.scanTimer = setInterval(() => void this.scanExpiringKeys(), EXPIRY_SCAN_MS);
    this.scanTimer.unref();
    void this.scanExpiringKeys();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.scanTimer);
    // Sends under way finish (each within the timeout); what is not claimed stays in the queue.
    await Promise.allSettled([...this.inFlight]);
    this.sender.close();
  }

  /**
   * Claims what fits in the free slots and starts sending it, again and again while the queue keeps
   * filling every slot (a backlog drains at the receivers' pace, not one batch per interval). Public
   * for tests.
   */
  async poll(): Promise<number> {
    if (this.polling || this.stopped) return 0;
    this.polling = true;
    let started = 0;
    try {
      for (;;) {
        const free = this.config.WEBHOOK_DELIVERY_CONCURRENCY - this.inFlight.size;
        // Shutdown may begin while a claim is awaited: no new round after it.
        if (free <= 0 || !this.running()) break;
        // The lease outlasts the send's timeout by a margin, so a live worker always records first.
        const claimed = await this.queue.claim(free, this.config.WEBHOOK_TIMEOUT_MS + 30_000);
        for (const delivery of claimed) {
          const sending = this.deliver(delivery).finally(() => {
            this.inFlight.delete(sending);
            // A full claim means there is probably more: a freed slot claims at once.
            if (this.backlog) void this.poll();
          });
          this.inFlight.add(sending);
        }
        started += claimed.length;
        this.backlog = claimed.length === free;
        if (!this.backlog) break;
      }
    } catch (error) {
      this.logger.warn(`Claiming webhook deliveries failed: ${(error as Error).message}`);
    } finally {
      this.polling = false;
    }
    return started;
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    try {
      const body = JSON.stringify(delivery.payload);
      const timestamp = Math.floor(Date.now() / 1000);
      const secrets = [delivery.secret_encrypted, delivery.previous_secret_encrypted]
        .filter((sealed): sealed is string => sealed !== null)
        .map((sealed) => this.secrets.open(sealed));
      // The event's id: the same on every retry, so receivers can drop duplicates.
      const id = `msg_${delivery.event_id}`;
      const result = await this.sender.send(
        delivery.url,
        {
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, id, timestamp, body),
        },
        body,
      );
      const outcome: AttemptOutcome =
        result.error === null && result.status !== null
          ? { kind: 'delivered', status: result.status, body: result.body }
          : {
              kind: 'failed',
              status: result.status,
              body: result.body,
              error: result.error ?? 'No answer.',
              retryInMs: retryDelayMs(delivery.attempts),
            };
      await this.queue.record(delivery, outcome);
      webhookDeliveries.inc({
        outcome:
          outcome.kind === 'delivered'
            ? 'delivered'
            : outcome.retryInMs === null || outcome.status === 410
              ? 'failed'
              : 'retry',
      });
    } catch (error) {
      // The lease runs out and the delivery is due again: nothing is lost.
      this.logger.warn(`Webhook delivery ${delivery.id} could not be recorded: ${(error as Error).message}`);
    }
  }

  private async scanExpiringKeys(): Promise<void> {
    try {
      await this.queue.recordExpiringKeys();
    } catch (error) {
      this.logger.warn(`Scanning for expiring keys failed: ${(error as Error).message}`);
    }
  }

  private running(): boolean {
    return !this.stopped;
  }

  /** Sends in progress (tests and shutdown wait for them). */
  idle(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight]);
  }
}
