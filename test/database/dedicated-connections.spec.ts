import { createServer, type Server, type Socket } from 'node:net';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/env.schema.js';
import { KeyChangeListener } from '../../src/api-keys/key-change-listener.js';
import { VerifiedKeyCache } from '../../src/api-keys/verified-key-cache.js';
import { runMigrationsExclusively } from '../../src/database/run-migrations.js';

/**
 * The two connections opened outside the pools (the migration lock's and the key-change listener's)
 * give up after DATABASE_CONNECT_TIMEOUT_MS, as the pools do: against a database that accepts the
 * connection and never answers (a stalled proxy, a host out of memory), a boot fails or goes on in that
 * time, not in a fixed 3 s.
 */
describe('dedicated connections open within DATABASE_CONNECT_TIMEOUT_MS', () => {
  let silent: Server;
  let url: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.add(socket); // accepted, never answered
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    url = `postgres://postgres@127.0.0.1:${address.port}/kqs`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  const timed = async (run: () => Promise<unknown>) => {
    const started = performance.now();
    const outcome = await run().then(
      () => 'resolved',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    return { outcome, ms: performance.now() - started };
  };

  it('the migration lock fails within the setting, and runs no migration', async () => {
    let migrated = false;
    const dataSource = {
      runMigrations: () => {
        migrated = true;
        return Promise.resolve([]);
      },
    } as unknown as DataSource;
    const { outcome, ms } = await timed(() => runMigrationsExclusively(dataSource, { url, embedded: false }, 300));
    expect(outcome).toMatch(/timeout/i);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
    expect(migrated).toBe(false);
  });

  it('the key-change listener gives up its first attempt within the setting; the service starts unsynced', async () => {
    const listener = new KeyChangeListener(new VerifiedKeyCache(), { url, embedded: false, close: async () => {} }, {
      DATABASE_CONNECT_TIMEOUT_MS: 300,
    } as AppConfig);
    try {
      const { outcome, ms } = await timed(() => listener.onApplicationBootstrap());
      expect(outcome).toBe('resolved');
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(2_000);
      expect(listener.synced).toBe(false);
    } finally {
      await listener.onApplicationShutdown();
    }
  });
});
