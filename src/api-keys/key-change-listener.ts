import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { DATABASE_TARGET } from '../database/database.module.js';
import { connectionName, type DatabaseTarget } from '../database/database.js';
import { VerifiedKeyCache } from './verified-key-cache.js';

export const KEY_CHANGE_CHANNEL = 'api_key_changed';
const RECONNECT_DELAY_MS = 1_000;
/** A silent, half-open connection would deliver nothing: a ping this often notices it. */
const HEARTBEAT_MS = 5_000;
/** Named, so an operator (and the tests) can tell the listening connection in pg_stat_activity. */
const HEARTBEAT_SQL = 'SELECT 1 -- api_key_changed listener heartbeat';
/** A heartbeat (or LISTEN) unanswered this long means the connection is lost. */
const HEARTBEAT_TIMEOUT_MS = 3_000;

/** A cache kept honest by one channel's notifications (each payload names what changed). */
export interface ChangeSubscriber {
  changed(payload: string): void;
  /** Whether notifications reach us; every change of state also means "forget everything". */
  setSynced(synced: boolean): void;
}

/**
 * Keeps the verified-key cache honest across instances: one dedicated connection LISTENs for key
 * changes. While it is down the cache falls back to a one-second lifetime, and every (re)connect
 * clears the cache, since notifications sent meanwhile are lost. Other caches ride on the same
 * connection with a channel of their own (`subscribe`, before the application bootstraps): the
 * account cache, so that sign-out everywhere reaches every instance as fast as a key revocation.
 */
@Injectable()
export class KeyChangeListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(KeyChangeListener.name);
  private client: pg.Client | null = null;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly subscribers = new Map<string, ChangeSubscriber>();

  constructor(
    cache: VerifiedKeyCache,
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.subscribe(KEY_CHANGE_CHANNEL, {
      changed: (keyId) => cache.invalidateKey(keyId),
      setSynced: (on) => cache.setSynced(on),
    });
  }

  /** Whether changes reach this instance now: the listening connection is up (or there is one instance). */
  get synced(): boolean {
    return this.target.embedded || this.client !== null;
  }

  /** Listens on `channel` too (channel names are ours: plain identifiers). Call before bootstrap. */
  subscribe(channel: string, subscriber: ChangeSubscriber): void {
    this.subscribers.set(channel, subscriber);
  }

  /**
   * Waits for the first attempt (at most the connection timeout; a failure retries in the background),
   * so that an instance starts serving synced: a connection made later clears every cache, and until
   * then a verified key is kept one second only.
   */
  async onApplicationBootstrap(): Promise<void> {
    // The embedded store serves one process only: local invalidation is all there is to do.
    if (this.target.embedded) this.setSynced(true);
    else await this.connect();
  }

  private setSynced(synced: boolean): void {
    for (const subscriber of this.subscribers.values()) subscriber.setSynced(synced);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.target.url,
      application_name: connectionName('listener'),
      connectionTimeoutMillis: this.config.DATABASE_CONNECT_TIMEOUT_MS,
      query_timeout: HEARTBEAT_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on('notification', (message) => {
      if (message.payload) this.subscribers.get(message.channel)?.changed(message.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${channel}`);
      if (this.stopped) {
        await client.end();
        return;
      }
      this.client = client;
      this.setSynced(true);
      this.heartbeat = setInterval(() => void client.query(HEARTBEAT_SQL).catch(() => this.lost(client)), HEARTBEAT_MS);
      this.heartbeat.unref();
    } catch (error) {
      this.logger.warn(`key-change listener could not connect: ${(error as Error).message}`);
      this.lost(client);
    }
  }

  private lost(client: pg.Client): void {
    // A late event from a connection already replaced says nothing about the current one.
    if (this.client !== null && this.client !== client) return void client.end().catch(() => undefined);
    this.client = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.setSynced(false);
    client.end().catch(() => undefined);
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }
}
