import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { TEST_JWT_SECRET } from '../support/app.js';

/**
 * What `npm start` gives a user without PostgreSQL must hold up under concurrent requests: with more
 * than one pooled connection, pglite-socket interleaved their protocol messages (500s, wrong 404s and
 * 402s). Keys, documents and queries at once, and the quota's exactness, on the embedded store.
 */
describe('the embedded store under concurrent requests', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-emb-concurrency-'));
  let app: INestApplication;
  let http: () => ReturnType<typeof request>;
  let auth: { Authorization: string };

  beforeAll(async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: 'silent',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    app = await createApp(config, { logger: false });
    await app.listen(0, '127.0.0.1');
    http = () => request(app.getHttpServer() as Server);
    await http().post('/auth/users/').send({ email: 'busy@example.com', password: 'busy password 1' }).expect(201);
    const tokens = await http()
      .post('/auth/jwt/create/')
      .send({ email: 'busy@example.com', password: 'busy password 1' })
      .expect(200);
    auth = { Authorization: `Bearer ${tokens.body.access}` };
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 60 concurrent key creations, uploads and queries all correctly', async () => {
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0
          ? http()
              .post('/v1/billings/api-keys/')
              .set(auth)
              .send({ name: `key ${i}` })
          : i % 3 === 1
            ? http()
                .post('/v1/documents/')
                .set(auth)
                .send({ title: `Zebra note ${i}`, content: `Zebras in herd ${i} graze on savanna grass at dawn.` })
            : http().post('/v1/query/').set(auth).send({ query: 'What do zebras graze on?' }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(
      Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? 200 : 201)),
    );
    const keys = await http().get('/v1/billings/api-keys/').set(auth).expect(200);
    expect(keys.body).toHaveLength(20);
    const documents = await http().get('/v1/documents/?limit=100').set(auth).expect(200);
    expect(documents.body.count).toBe(20);
  }, 60_000);

  it('spends exactly the remaining credits under a burst of queries', async () => {
    const db = app.get(DataSource);
    await db.query(
      `UPDATE subscriptions s SET monthly_credits = s.credits_used + 10
         FROM users u WHERE u.organization_id = s.organization_id AND u.email = 'busy@example.com'`,
    );
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        http()
          .post('/v1/query/')
          .set(auth)
          .send({ query: 'zebras' })
          .then((r) => r.status),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(30);
    const subscription = await http().get('/v1/billings/subscription/').set(auth).expect(200);
    expect(subscription.body.current_quota.credits_remaining).toBe(0);
  }, 60_000);
});
