import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { migrations } from '../../src/database/migrations/index.js';
import { ADMIN, TEST_JWT_SECRET } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

interface Source {
  title: string;
  score: number;
}

/**
 * The Collections migration on data of the edition before: the organization's documents land in its
 * `default` collection (whose id is the organization's, the id their corpus was stored under), and a
 * search finds them with the same scores, on PostgreSQL and on the embedded store (PGlite).
 */
describe.each([
  ['PostgreSQL', 'postgres'],
  ['the embedded store', 'embedded'],
] as const)('the Collections migration on %s', (_, store) => {
  let app: INestApplication;
  let http: () => ReturnType<typeof request>;
  let database: TestDatabase | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-collections-'));

  beforeAll(async () => {
    database = store === 'postgres' ? await createTestDatabase() : undefined;
    const config = loadConfig({
      NODE_ENV: 'test',
      ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir }),
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
    });
    app = await createApp(config, { logger: process.env.TEST_LOGS ? undefined : false });
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as Server;
    http = () => request(server);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('puts every private document into its organization’s default collection, without a reindex', async () => {
    const db = app.get(DataSource);
    const email = `migrated-${Date.now()}@example.com`;
    await http().post('/auth/users/').send({ email, password: 'correct horse battery' }).expect(201);
    const tokens = await http()
      .post('/auth/jwt/create/')
      .send({ email, password: 'correct horse battery' })
      .expect(200);
    const auth = { Authorization: `Bearer ${tokens.body.access}` };
    const organization = (await http().get('/auth/users/me/').set(auth).expect(200)).body.organization_id as string;
    const documents = Array.from({ length: 7 }, (_, i) => ({
      title: `Note ${i}`,
      content: `The lighthouse keeper logs ${'storms '.repeat(1 + i)}and ships on night ${i}.`,
    }));
    await http().post('/v1/documents/batch/').set(auth).send({ documents }).expect(201);
    const search = async () =>
      (
        (await http().post('/v1/search/').set(auth).send({ query: 'lighthouse storms', top_k: 10 }).expect(200)).body
          .results as Source[]
      ).map((s) => [s.title, s.score]);
    const before = await search();
    expect(before).toHaveLength(7);
    const chunks = await db.query('SELECT id, scope_id FROM document_chunks ORDER BY id');

    // Back to the edition before collections, then forward again, as an upgrade runs it.
    // Collections and every migration after it, newest first.
    const since = migrations.length - migrations.findIndex((migration) => migration.name.startsWith('Collections'));
    for (let i = 0; i < since; i++) await db.undoLastMigration({ transaction: 'each' });
    const columns = await db.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'documents' AND column_name = 'collection_id'`,
    );
    expect(columns).toEqual([]);
    await db.runMigrations({ transaction: 'each' });

    const collections = await db.query('SELECT id, name FROM collections WHERE organization_id = $1', [organization]);
    expect(collections).toEqual([{ id: organization, name: 'default' }]);
    const placed = await db.query(
      'SELECT count(*)::int AS n FROM documents WHERE organization_id = $1 AND collection_id = $1',
      [organization],
    );
    expect(placed[0].n).toBe(7);
    // The index was not touched: the same chunks under the same corpus id.
    expect(await db.query('SELECT id, scope_id FROM document_chunks ORDER BY id')).toEqual(chunks);
    expect(await search()).toEqual(before);
    const listed = await http().get('/v1/collections/default/').set(auth).expect(200);
    expect(listed.body).toMatchObject({ id: organization, document_count: 7, chunk_count: chunks.length });
  });
});
