import type { INestApplication } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { migrations } from '../../src/database/migrations/index.js';
import { IdempotencyKeyPurger } from '../../src/idempotency/idempotency-key-purger.js';
import { ADMIN } from '../support/app.js';
import { connect, createTestDatabase } from '../support/database.js';

/** Boots the service as main.ts does with no DATABASE_URL: the embedded store under `dataDir`. */
async function bootEmbedded(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ app: INestApplication; http: () => ReturnType<typeof request> }> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LAST_USED_FLUSH_MS: '200',
    ...env,
  });
  expect(config.DATABASE_URL).toBeUndefined();
  const app = await createApp(config, { logger: process.env.TEST_LOGS ? undefined : false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  return { app, http: () => request(server) };
}

async function appliedMigrations(dataSource: DataSource): Promise<string[]> {
  const rows: { name: string }[] = await dataSource.query('SELECT name FROM migrations ORDER BY timestamp');
  return rows.map((row) => row.name);
}

describe('the embedded store (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-embedded-'));
  const user = { email: 'embedded@example.com', password: 'embedded password' };
  let key: string;
  let keyId: string;
  let refresh: string;

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('boots on an empty DATA_DIR, serves sign-up, sign-in and key creation, and closes', async () => {
    const first = await bootEmbedded(dataDir);
    try {
      expect(existsSync(join(dataDir, 'pgdata'))).toBe(true);
      await first.http().get('/health/ready/').expect(200);
      await first.http().post('/auth/users/').send(user).expect(201);
      const tokens = await first.http().post('/auth/jwt/create/').send(user).expect(200);
      refresh = tokens.body.refresh;
      const created = await first
        .http()
        .post('/v1/billings/api-keys/')
        .set('Authorization', `Bearer ${tokens.body.access}`)
        .send({ name: 'survivor' })
        .expect(201);
      ({ key, id: keyId } = created.body);
      await first.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
      // created_at has real microseconds here too (the store's own clock has milliseconds only).
      const stamps = [created.body.created_at as string];
      for (let i = 0; i < 4; i++) {
        const another = await first
          .http()
          .post('/v1/billings/api-keys/')
          .set('Authorization', `Bearer ${tokens.body.access}`)
          .send({ name: `micro ${i}` });
        stamps.push(another.body.created_at);
        await first
          .http()
          .delete(`/v1/billings/api-keys/${another.body.id}/`)
          .set('Authorization', `Bearer ${tokens.body.access}`)
          .expect(204);
      }
      for (const stamp of stamps) expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(stamps.some((stamp) => !stamp.endsWith('000Z'))).toBe(true);
      const stored: { t: string }[] = await first.app
        .get(DataSource)
        .query(
          `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t FROM api_keys WHERE id = $1`,
          [keyId],
        );
      expect(stored[0].t).toBe(stamps[0]);
    } finally {
      await first.app.close();
    }
  }, 120_000);

  it('keeps users, keys, sessions and the last use across a restart on the same DATA_DIR', async () => {
    const second = await bootEmbedded(dataDir);
    try {
      // The refresh token still works: the JWT secret (none configured) was kept under DATA_DIR too.
      const refreshed = await second.http().post('/auth/jwt/refresh/').send({ refresh }).expect(200);
      const me = await second.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
      expect(me.body.email).toBe(user.email);
      const listed = await second
        .http()
        .get('/v1/billings/api-keys/')
        .set('Authorization', `Bearer ${refreshed.body.access}`)
        .expect(200);
      const active = (listed.body as { id: string; is_active: boolean; last_used_at: string | null }[]).filter(
        (k) => k.is_active,
      );
      expect(active).toHaveLength(1);
      expect(active[0]).toMatchObject({ id: keyId, name: 'survivor', is_active: true });
      // The use before the restart was flushed on shutdown.
      expect(active[0].last_used_at).not.toBeNull();
      await second.http().post('/auth/jwt/create/').send(ADMIN).expect(200);
      const admins: { n: number }[] = await second.app
        .get(DataSource)
        .query('SELECT count(*)::int AS n FROM users WHERE is_admin');
      expect(admins[0].n).toBe(1);
    } finally {
      await second.app.close();
    }
  }, 120_000);

  it('replays an Idempotency-Key (one document stored) and purges expired keys (the same SQL as on PostgreSQL)', async () => {
    const embedded = await bootEmbedded(dataDir);
    try {
      const send = () =>
        embedded
          .http()
          .post('/v1/documents/')
          .set('X-API-Key', key)
          .set('Idempotency-Key', 'embedded-1')
          .send({ title: 'Embedded idempotency', content: 'Stored once.' });
      const first = await send().expect(201);
      const replay = await send().expect(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const store = embedded.app.get(DataSource);
      const documents: { n: number }[] = await store.query(
        `SELECT count(*)::int AS n FROM documents WHERE title = 'Embedded idempotency'`,
      );
      expect(documents[0].n).toBe(1);
      await store.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`);
      expect(await embedded.app.get(IdempotencyKeyPurger).purgeExpired()).toBe(1);
    } finally {
      await embedded.app.close();
    }
  }, 120_000);

  it('ran the same migrations as on PostgreSQL, each once', async () => {
    const embedded = await bootEmbedded(dataDir);
    let embeddedNames: string[];
    try {
      embeddedNames = await appliedMigrations(embedded.app.get(DataSource));
    } finally {
      await embedded.app.close();
    }
    const expected = migrations.map((migration) => new migration().name ?? migration.name);
    expect(embeddedNames).toEqual(expected);

    const database = await createTestDatabase();
    try {
      const server = await createApp(
        loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, JWT_SECRET: 'x'.repeat(32) }),
        { logger: false },
      );
      await server.close();
      const db = await connect(database.url);
      const { rows } = await db.query('SELECT name FROM migrations ORDER BY timestamp');
      await db.end();
      expect(rows.map((row: { name: string }) => row.name)).toEqual(embeddedNames);
    } finally {
      await database.drop();
    }
  }, 120_000);

  it('refuses a second instance on a DATA_DIR that is in use, and leaves the first serving', async () => {
    const first = await bootEmbedded(dataDir);
    try {
      await expect(bootEmbedded(dataDir)).rejects.toThrow(/embedded store .* is in use by process \d+/);
      await first.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
    } finally {
      await first.app.close();
    }
    expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
  }, 120_000);

  it('takes over a lock left by a process that is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dataDir, 'pgdata.lock'), gone.stdout);
    const restarted = await bootEmbedded(dataDir);
    try {
      expect(readFileSync(join(dataDir, 'pgdata.lock'), 'utf8')).toBe(String(process.pid));
      await restarted.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
    } finally {
      await restarted.app.close();
    }
  }, 120_000);

  it("keeps the database files to the service's user: pgdata is 0700, tightened when it was open", async () => {
    // PGlite writes its files 0666 whatever the umask: only the directory keeps other users out.
    const pgdata = join(dataDir, 'pgdata');
    chmodSync(pgdata, 0o755);
    const restarted = await bootEmbedded(dataDir);
    try {
      expect((statSync(pgdata).mode & 0o777).toString(8)).toBe('700');
    } finally {
      await restarted.app.close();
    }
  }, 120_000);
});
