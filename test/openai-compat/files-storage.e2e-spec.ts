import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { CollectionPurger } from '../../src/collections/collection-purger.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { migrations } from '../../src/database/migrations/index.js';
import { ADMIN, createKey, signUp, startTestApp, type TestApp } from '../support/app.js';

const LIMIT_MESSAGE =
  "Your organization's files may take at most 1 MB (FILES_STORAGE_MB_PER_ORGANIZATION), and this file would pass that; delete files to upload more.";

/** The storage bound of `POST /v1/files` (FILES_STORAGE_MB_PER_ORGANIZATION); the attach queue's bounds are in vector-store-files-async. */
describe('files storage per organization', () => {
  let test: TestApp;

  beforeAll(async () => {
    // 1 MB per organization; uploads at once not limited by the instance, so only the bound refuses.
    test = await startTestApp({ FILES_STORAGE_MB_PER_ORGANIZATION: '1', MAX_UPLOADS_IN_FLIGHT: '50' });
  });
  afterAll(() => test.close());

  const member = async () => `Bearer ${(await createKey(test, await signUp(test))).key}`;
  const upload = (auth: string, bytes: number, filename = 'notes.txt') =>
    test
      .http()
      .post('/v1/files')
      .set('Authorization', auth)
      .field('purpose', 'assistants')
      .attach('file', Buffer.alloc(bytes, 'a'), { filename, contentType: 'text/plain' });
  const stored = async (organizationId: string) => {
    const { rows } = await test.db.query<{ n: number; sum: string | null; usage: string | null }>(
      `SELECT count(*)::int AS n, sum(bytes)::text AS sum,
              (SELECT bytes::text FROM files_usage WHERE organization_id = $1) AS usage
         FROM files WHERE organization_id = $1`,
      [organizationId],
    );
    return { files: rows[0].n, bytes: Number(rows[0].sum ?? 0), counted: Number(rows[0].usage ?? 0) };
  };
  const organizationOf = async (fileId: string) =>
    (await test.db.query<{ o: string }>(`SELECT organization_id AS o FROM files WHERE id = $1`, [fileId])).rows[0].o;

  it('refuses the upload that would pass the bound (400 naming it, nothing stored); a deletion makes room', async () => {
    const auth = await member();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(auth, 300_000).expect(201)).body.id as string);
    const organizationId = await organizationOf(ids[0]);
    expect(await stored(organizationId)).toEqual({ files: 3, bytes: 900_000, counted: 900_000 });

    const refused = await upload(auth, 300_000, 'one-too-many.txt').expect(400);
    expect(refused.body).toEqual({
      detail: LIMIT_MESSAGE,
      error: { message: LIMIT_MESSAGE, type: 'invalid_request_error', code: 'invalid_value', param: null },
    });
    expect(await stored(organizationId)).toEqual({ files: 3, bytes: 900_000, counted: 900_000 });
    const listed = await test.http().get('/v1/files?limit=100').set('Authorization', auth).expect(200);
    expect(listed.body.data.map((file: { filename: string }) => file.filename)).not.toContain('one-too-many.txt');
    // What is left still fits: exactly to the byte.
    await upload(auth, 1_048_576 - 900_000 + 1).expect(400);
    await upload(auth, 1_048_576 - 900_000).expect(201);
    await upload(auth, 1).expect(400);

    await test.http().delete(`/v1/files/${ids[0]}`).set('Authorization', auth).expect(200);
    expect(await stored(organizationId)).toMatchObject({ files: 3, counted: 1_048_576 - 300_000 });
    await upload(auth, 300_000).expect(201);
    expect(await stored(organizationId)).toEqual({ files: 4, bytes: 1_048_576, counted: 1_048_576 });
    await upload(auth, 1).expect(400);

    // Another organization has its own bound.
    await upload(await member(), 1_000_000).expect(201);
  });

  it('20 concurrent uploads never pass the bound: exactly the ones that fit are stored', async () => {
    const auth = await member();
    const first = (await upload(auth, 100_000).expect(201)).body.id as string;
    const organizationId = await organizationOf(first);
    const answers = await Promise.all(Array.from({ length: 20 }, () => upload(auth, 100_000)));
    const statuses = answers.map((answer) => answer.status).sort();
    // 1,048,576 bytes hold 10 files of 100,000: the first and 9 of the 20.
    expect(statuses).toEqual([...Array(9).fill(201), ...Array(11).fill(400)]);
    for (const answer of answers.filter((one) => one.status === 400)) expect(answer.body.detail).toBe(LIMIT_MESSAGE);
    expect(await stored(organizationId)).toEqual({ files: 10, bytes: 1_000_000, counted: 1_000_000 });
  });

  it('each attachment counts the file again (its indexed copy) until detached, refused or deleted; past the bound, a 400', async () => {
    const auth = await member();
    const file = (await upload(auth, 300_000, 'manual.txt').expect(201)).body.id as string;
    const organizationId = await organizationOf(file);
    const storeNamed = async (name: string) =>
      (await test.http().post('/v1/vector_stores').set('Authorization', auth).send({ name }).expect(201)).body
        .id as string;
    const attach = (store: string, id = file) =>
      test.http().post(`/v1/vector_stores/${store}/files`).set('Authorization', auth).send({ file_id: id });
    const settle = async (store: string, id = file) => {
      for (let i = 0; i < 300; i++) {
        const answer = await test
          .http()
          .get(`/v1/vector_stores/${store}/files/${id}`)
          .set('Authorization', auth)
          .expect(200);
        if (answer.body.status !== 'in_progress') return answer.body.status as string;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('still in_progress');
    };
    const counted = async () => (await stored(organizationId)).counted;
    const [a, b, c] = [await storeNamed('A'), await storeNamed('B'), await storeNamed('C')];

    await attach(a).expect(201);
    expect(await counted()).toBe(600_000); // taken when queued, before it is indexed
    expect(await settle(a)).toBe('completed');
    await attach(b).expect(201);
    expect(await counted()).toBe(900_000);
    const refused = await attach(c).expect(400);
    const message =
      "Your organization's files and their copies in vector stores may take at most 1 MB (FILES_STORAGE_MB_PER_ORGANIZATION), and attaching this file would pass that; detach or delete files to attach more.";
    expect(refused.body).toEqual({
      detail: message,
      error: { message, type: 'invalid_request_error', code: 'invalid_value', param: null },
    });
    const none = await test.http().get(`/v1/vector_stores/${c}/files`).set('Authorization', auth).expect(200);
    expect(none.body.data).toEqual([]);
    expect(await counted()).toBe(900_000);
    // An upload meets the same bound.
    await upload(auth, 200_000).expect(400);

    // Attached again: the same copy, counted once.
    await attach(a).expect(201);
    expect(await counted()).toBe(900_000);
    expect(await settle(a)).toBe('completed');
    await settle(b);
    // Detached: given back; attached elsewhere, taken again.
    await test.http().delete(`/v1/vector_stores/${b}/files/${file}`).set('Authorization', auth).expect(200);
    expect(await counted()).toBe(600_000);
    await attach(c).expect(201);
    expect(await settle(c)).toBe('completed');
    expect(await counted()).toBe(900_000);
    // Its document deleted through /v1/documents: out of the store, given back.
    const documents = await test.http().get(`/v1/documents/?collection_id=${c}`).set('Authorization', auth).expect(200);
    await test
      .http()
      .delete(`/v1/documents/${documents.body.results[0].id as string}/`)
      .set('Authorization', auth)
      .expect(204);
    expect(await counted()).toBe(600_000);
    // A file refused while indexing takes nothing once refused.
    const zip = (await upload(auth, 1_000, 'archive.zip').expect(201)).body.id as string;
    await attach(b, zip).expect(201);
    expect(await settle(b, zip)).toBe('failed');
    expect(await counted()).toBe(601_000);
    // The store deleted: its copies given back.
    await test.http().delete(`/v1/vector_stores/${a}`).set('Authorization', auth).expect(200);
    await test.app.get(CollectionPurger).idle(); // the store's documents and attachments go right after
    expect(await counted()).toBe(301_000);
    // One attachment stays, for the migration's backfill below.
    await attach(c).expect(201);
    expect(await settle(c)).toBe('completed');
    expect(await counted()).toBe(601_000);
    const { rows } = await test.db.query<{ sum: string }>(
      `SELECT (SELECT coalesce(sum(bytes), 0) FROM files WHERE organization_id = $1)
            + (SELECT coalesce(sum(charged_bytes), 0) FROM vector_store_files WHERE organization_id = $1) AS sum`,
      [organizationId],
    );
    expect(Number(rows[0].sum)).toBe(601_000);
  });

  it('deleting a file gives back its bytes and those of every copy attached', async () => {
    const auth = await member();
    const file = (await upload(auth, 100_000, 'copied.txt').expect(201)).body.id as string;
    const organizationId = await organizationOf(file);
    for (const name of ['X', 'Y']) {
      const store = (await test.http().post('/v1/vector_stores').set('Authorization', auth).send({ name }).expect(201))
        .body.id as string;
      await test
        .http()
        .post(`/v1/vector_stores/${store}/files`)
        .set('Authorization', auth)
        .send({ file_id: file })
        .expect(201);
    }
    expect((await stored(organizationId)).counted).toBe(300_000);
    await test.http().delete(`/v1/files/${file}`).set('Authorization', auth).expect(200);
    expect((await stored(organizationId)).counted).toBe(0);
  });

  it('a vector store created with file_ids that would pass the bound is not created at all (400)', async () => {
    const auth = await member();
    const files: string[] = [];
    for (let i = 0; i < 3; i++)
      files.push((await upload(auth, 200_000, `part-${i}.txt`).expect(201)).body.id as string);
    const organizationId = await organizationOf(files[0]);
    // 600,000 stored; the copies of the first two fit (1,000,000), the third's would not.
    const refused = await test
      .http()
      .post('/v1/vector_stores')
      .set('Authorization', auth)
      .send({ name: 'Too big', file_ids: files })
      .expect(400);
    expect(refused.body.detail).toMatch(/attaching this file would pass that/);
    const stores = await test.http().get('/v1/vector_stores?limit=100').set('Authorization', auth).expect(200);
    expect(stores.body.data.map((store: { name: string }) => store.name)).not.toContain('Too big');
    const attachments = await test.db.query(`SELECT 1 FROM vector_store_files WHERE organization_id = $1`, [
      organizationId,
    ]);
    expect(attachments.rowCount).toBe(0);
    expect((await stored(organizationId)).counted).toBe(600_000);
    // The same name is free, and two files fit.
    const created = await test
      .http()
      .post('/v1/vector_stores')
      .set('Authorization', auth)
      .send({ name: 'Too big', file_ids: files.slice(0, 2) })
      .expect(201);
    expect(created.body.file_counts).toMatchObject({ total: 2 });
    expect((await stored(organizationId)).counted).toBe(1_000_000);
  });

  it('the migration counts the files stored before it (backfill), per organization', async () => {
    const db = test.app.get(DataSource);
    const before = await test.db.query<{ organization_id: string; bytes: string }>(
      `SELECT organization_id, bytes::text FROM files_usage WHERE bytes > 0 ORDER BY organization_id`,
    );
    expect(before.rows.length).toBeGreaterThanOrEqual(4);
    const since = migrations.length - migrations.findIndex((migration) => migration.name.startsWith('FilesStorage'));
    // The running app's background work (the attach queue's claims) can deadlock with an index being
    // created or dropped here (seen once in CI); each migration is its own transaction, so a deadlocked
    // one left nothing behind and is simply run again.
    const retryingDeadlocks = async (step: () => Promise<unknown>) => {
      for (let tries = 1; ; tries++) {
        try {
          return await step();
        } catch (error) {
          if (tries >= 5 || (error as { driverError?: { code?: string } }).driverError?.code !== '40P01') throw error;
        }
      }
    };
    for (let i = 0; i < since; i++) await retryingDeadlocks(() => db.undoLastMigration({ transaction: 'each' }));
    await retryingDeadlocks(() => db.runMigrations({ transaction: 'each' }));
    const after = await test.db.query<{ organization_id: string; bytes: string }>(
      `SELECT organization_id, bytes::text FROM files_usage WHERE bytes > 0 ORDER BY organization_id`,
    );
    expect(after.rows).toEqual(before.rows);
  });
});

describe('files storage per organization on the embedded store (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-files-storage-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('counts, refuses and gives back as on PostgreSQL; attaches are indexed', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      FILES_STORAGE_MB_PER_ORGANIZATION: '1',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    const app = await createApp(config, { logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      const http = () => request(app.getHttpServer() as Server);
      const user = { email: 'files-storage@example.com', password: 'files storage password' };
      await http().post('/auth/users/').send(user).expect(201);
      const tokens = await http().post('/auth/jwt/create/').send(user).expect(200);
      const key = await http()
        .post('/v1/billings/api-keys/')
        .set('Authorization', `Bearer ${tokens.body.access as string}`)
        .send({ name: 'files' })
        .expect(201);
      const upload = (bytes: number) =>
        http()
          .post('/v1/files')
          .set('Authorization', `Bearer ${key.body.key as string}`)
          .field('purpose', 'assistants')
          .attach('file', Buffer.alloc(bytes, 'a'), { filename: 'notes.txt', contentType: 'text/plain' });
      const first = (await upload(600_000).expect(201)).body.id as string;
      expect((await upload(600_000).expect(400)).body.detail).toBe(LIMIT_MESSAGE);
      await http()
        .delete(`/v1/files/${first}`)
        .set('Authorization', `Bearer ${key.body.key as string}`)
        .expect(200);
      await upload(600_000).expect(201);
      const kept = (await upload(200_000).expect(201)).body.id as string;
      // The attach queue runs on the embedded store too: in_progress at once, then completed, its copy
      // counted (600,000 + 200,000 + 200,000 bytes, so nothing more fits).
      const auth = `Bearer ${key.body.key as string}`;
      const store = (await http().post('/v1/vector_stores').set('Authorization', auth).send({ name: 'S' }).expect(201))
        .body.id as string;
      const attached = await http()
        .post(`/v1/vector_stores/${store}/files`)
        .set('Authorization', auth)
        .send({ file_id: kept })
        .expect(201);
      expect(attached.body.status).toBe('in_progress');
      let status = 'in_progress';
      for (let i = 0; i < 200 && status === 'in_progress'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await http().get(`/v1/vector_stores/${store}/files/${kept}`).set('Authorization', auth).expect(200))
          .body.status as string;
      }
      expect(status).toBe('completed');
      expect((await upload(100_000).expect(400)).body.detail).toBe(LIMIT_MESSAGE);
      const files = await http()
        .get('/v1/files')
        .set('Authorization', `Bearer ${key.body.key as string}`)
        .expect(200);
      expect(files.body.data).toHaveLength(2);
    } finally {
      await app.close();
    }
  });
});
