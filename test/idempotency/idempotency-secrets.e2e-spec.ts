import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { IdempotencyBudget1795723156529 } from '../../src/database/migrations/1795723156529-IdempotencyBudget.js';
import { ADMIN, createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { CapturedLogs } from '../support/ops.js';

const KEY_WITHHELD =
  'The full key is shown once, in the first answer, and is not kept. If it was lost, rotate this key.';

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : [],
  );
}

/** Files under `dir` whose bytes contain `needle` (the WAL and every table file included). */
function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  return filesUnder(dir).filter((file) => readFileSync(file).includes(bytes));
}

type Send = (path: string, key: string, body: object) => request.Test;

/**
 * Creates a key and rotates it, each with an Idempotency-Key and each retried once; checks the
 * answers and their replays, and answers the two full keys that were shown.
 */
async function createAndRotate(send: Send): Promise<string[]> {
  const created = await send('/v1/billings/api-keys/', 'create-1', { name: 'partner' }).expect(201);
  expect(created.headers['cache-control']).toBe('no-store');
  expect(created.body.key).toMatch(/^svc_/);
  const createReplay = await send('/v1/billings/api-keys/', 'create-1', { name: 'partner' }).expect(201);
  expect(createReplay.headers['idempotent-replayed']).toBe('true');
  expect(createReplay.headers['cache-control']).toBe('no-store');
  const { key: shown, ...record } = created.body as Record<string, unknown>;
  expect(createReplay.body).toEqual({ ...record, key_withheld: KEY_WITHHELD });

  const rotatePath = `/v1/billings/api-keys/${created.body.id}/rotate/`;
  const rotated = await send(rotatePath, 'rotate-1', {}).expect(201);
  expect(rotated.headers['cache-control']).toBe('no-store');
  expect(rotated.body.rotated_from).toBe(created.body.id);
  const rotateReplay = await send(rotatePath, 'rotate-1', {}).expect(201);
  expect(rotateReplay.headers['idempotent-replayed']).toBe('true');
  expect(rotateReplay.headers['cache-control']).toBe('no-store');
  const { key: rotatedKey, ...rotatedRecord } = rotated.body as Record<string, unknown>;
  expect(rotateReplay.body).toEqual({ ...rotatedRecord, key_withheld: KEY_WITHHELD });
  // Run once each: one key created, then one replaced by one.
  return [shown as string, rotatedKey as string];
}

describe('full API keys rest nowhere, Idempotency-Key or not (PostgreSQL)', () => {
  let test: TestApp;
  let user: SignedInUser;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    test = await startTestApp({ LOG_LEVEL: 'debug' }, undefined, { logStream: logs });
    user = await signUp(test);
  });
  afterAll(() => test.close());

  it('stores a key creation and a rotation without the key; their replays say to rotate a lost key', async () => {
    const send: Send = (path, key, body) =>
      test.http().post(path).set(user.auth).set('Idempotency-Key', key).send(body);
    const shown = await createAndRotate(send);
    const { rows: keys } = await test.db.query('SELECT count(*)::int AS n FROM api_keys');
    expect(keys[0].n).toBe(2);

    // Read over a real connection: no table holds either key, in any column.
    const { rows: tables } = await test.db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((table) => table.table_name)).toContain('idempotency_keys');
    for (const { table_name: table } of tables) {
      const { rows } = await test.db.query(`SELECT t::text AS row FROM "${table}" t`);
      const text = rows.map((row) => row.row as string).join('\n');
      for (const key of shown) expect({ table, found: text.includes(key) }).toEqual({ table, found: false });
    }
    const { rows: stored } = await test.db.query(
      `SELECT response_body::jsonb AS body FROM idempotency_keys WHERE key IN ('create-1', 'rotate-1')`,
    );
    for (const row of stored) {
      expect(row.body.key).toBeUndefined();
      expect(row.body.key_withheld).toBe(KEY_WITHHELD);
    }
    for (const key of shown) expect(logs.text.includes(key)).toBe(false);
  });

  it('removes, on upgrade, the full keys an earlier version stored in key answers (the record stays replayable)', async () => {
    const migration = new IdempotencyBudget1795723156529();
    const runner = test.app.get(DataSource).createQueryRunner();
    try {
      await migration.down(runner);
      const organizationId = (await test.db.query('SELECT organization_id FROM users WHERE email = $1', [user.email]))
        .rows[0].organization_id;
      const old = { id: 'k1', name: 'old', key: 'svc_' + 'A'.repeat(38), key_prefix: 'svc_AAAAAAAA' };
      await test.db.query(
        `INSERT INTO idempotency_keys (organization_id, key, request_hash, claim_id, claimed_until, response_status,
                                       response_headers, response_body, expires_at)
         VALUES ($1, 'stored-before', repeat('0', 64), gen_random_uuid(), now(), 201, '{}', $2, now() + interval '1 hour'),
                ($1, 'empty-before', repeat('1', 64), gen_random_uuid(), now(), 204, '{}', '', now() + interval '1 hour')`,
        [organizationId, JSON.stringify(old)],
      );
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const { rows } = await test.db.query(
      `SELECT key, response_body, stored_bytes FROM idempotency_keys WHERE key IN ('stored-before', 'empty-before') ORDER BY key`,
    );
    expect(rows[0]).toMatchObject({ key: 'empty-before', response_body: '' });
    expect(rows[1].key).toBe('stored-before');
    expect(JSON.parse(rows[1].response_body)).toEqual({
      id: 'k1',
      name: 'old',
      key_prefix: 'svc_AAAAAAAA',
      key_withheld: KEY_WITHHELD,
    });
    const { rows: usage } = await test.db.query('SELECT sum(bytes)::int AS n FROM idempotency_usage');
    const { rows: counted } = await test.db.query('SELECT sum(stored_bytes)::int AS n FROM idempotency_keys');
    expect(usage[0].n).toBe(counted[0].n);
  });

  it('still refuses a replay once the key that sent it lost the scope, or was revoked', async () => {
    const apiKey = await createKey(test, user, 'writer');
    const send = () =>
      test
        .http()
        .post('/v1/documents/')
        .set('X-API-Key', apiKey.key)
        .set('Idempotency-Key', 'scoped-1')
        .send({ title: 'scoped', content: 'x' });
    await send().expect(201);
    await send().expect(201);
    await test
      .http()
      .patch(`/v1/billings/api-keys/${apiKey.id}/update/`)
      .set(user.auth)
      .send({ scopes: ['query'] })
      .expect(200);
    await send().expect(403, { detail: 'This API key lacks the scope "documents:write".' });
    await test.http().post(`/v1/billings/api-keys/${apiKey.id}/revoke/`).set(user.auth).expect(200);
    await send().expect(401);
  });

  it('sends Cache-Control: no-store on every answer of those routes: a refusal and its replay too', async () => {
    const send = () =>
      test.http().post('/v1/billings/api-keys/').set(user.auth).set('Idempotency-Key', 'bad-name').send({});
    const refused = await send().expect(400);
    expect(refused.headers['cache-control']).toBe('no-store');
    const replay = await send().expect(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['cache-control']).toBe('no-store');
    const unauthenticated = await test.http().post('/v1/billings/api-keys/').send({ name: 'x' }).expect(401);
    expect(unauthenticated.headers['cache-control']).toBe('no-store');
  });
});

describe('full API keys rest nowhere (the embedded store: its data directory, WAL included)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-secrets-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('leaves neither key in any file under DATA_DIR after a keyed creation, rotation and their replays', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
    });
    const app = await createApp(config, { logger: false });
    let shown: string[];
    try {
      await app.listen(0, '127.0.0.1');
      const http = () => request(app.getHttpServer() as Server);
      const person = { email: 'secrets@example.com', password: 'embedded password' };
      await http().post('/auth/users/').send(person).expect(201);
      const tokens = await http().post('/auth/jwt/create/').send(person).expect(200);
      const send: Send = (path, key, body) =>
        http().post(path).set('Authorization', `Bearer ${tokens.body.access}`).set('Idempotency-Key', key).send(body);
      shown = await createAndRotate(send);
    } finally {
      await app.close();
    }
    expect(filesUnder(dataDir).length).toBeGreaterThan(10);
    for (const key of shown) expect(filesContaining(dataDir, key)).toEqual([]);
    // The search works: the idempotency key names themselves are in the files.
    expect(filesContaining(dataDir, 'rotate-1').length).toBeGreaterThan(0);
  }, 120_000);
});
