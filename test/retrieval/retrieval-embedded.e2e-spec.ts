import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { RETRIEVER, type Retriever } from '../../src/retrieval/retriever.js';
import { ADMIN } from '../support/app.js';
import { makePdf } from '../support/knowledge.js';

/**
 * The same indexing and ranking SQL on the embedded store (PGlite, PostgreSQL 18 in WASM).
 * (Concurrent requests on the embedded store are covered by embedded-concurrency.e2e-spec.ts.)
 */
describe('retrieval on the embedded store (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-retrieval-'));
  let app: INestApplication;
  let http: () => ReturnType<typeof request>;
  let auth: { Authorization: string };
  let domainId: string;

  beforeAll(async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    app = await createApp(config, { logger: process.env.TEST_LOGS ? undefined : false });
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as Server;
    http = () => request(server);
    const tokens = await http().post('/auth/jwt/create/').send(ADMIN).expect(200);
    auth = { Authorization: `Bearer ${tokens.body.access}` };
    domainId = (await http().post('/v1/domains/').set(auth).send({ name: 'Astronomy', slug: 'astronomy' }).expect(201))
      .body.id;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stats = async () => {
    const db = app.get(DataSource);
    const stored = await db.query('SELECT term, df FROM term_stats WHERE scope_id = $1 ORDER BY term', [domainId]);
    const expected = await db.query(
      `SELECT e.lexeme AS term, count(*)::int AS df FROM document_chunks c, unnest(c.search_vector) e
        WHERE c.scope_id = $1 GROUP BY e.lexeme ORDER BY e.lexeme`,
      [domainId],
    );
    const corpus = await db.query('SELECT chunk_count::int AS n FROM corpus_stats WHERE scope_id = $1', [domainId]);
    return { stored, expected, chunks: corpus[0]?.n ?? 0 };
  };

  it('indexes JSON and PDF documents, ranks them, and keeps the statistics exact', async () => {
    const texts = [
      ['Mars', 'Mars is a cold desert planet with two small moons.'],
      ['Jupiter', 'Jupiter is a gas giant with a great red storm and dozens of moons.'],
      ['Comets', 'Comets are icy bodies that grow tails near the sun.'],
    ];
    const created = [];
    for (const [title, content] of texts) {
      created.push(
        await http().post('/v1/domains/astronomy/documents/').set(auth).send({ title, content }).expect(201),
      );
    }
    await http()
      .post('/v1/domains/astronomy/documents/')
      .set(auth)
      .attach('file', makePdf(['Saturn has bright rings of ice.']), 'saturn.pdf')
      .expect(201);

    const retriever = app.get<Retriever>(RETRIEVER);
    const storm = await retriever.search('Which planet has a giant storm?', { domainId }, { limit: 3 });
    expect(storm[0]).toMatchObject({ title: 'Jupiter' });
    expect(storm[0].snippet).toContain('**storm**');
    const rings = await retriever.search('icy rings', { domainId }, { limit: 3 });
    expect(rings.map((r) => r.title)).toEqual(['saturn.pdf', 'Comets']);
    await expect(retriever.search('which is the one?', { domainId }, { limit: 3 })).resolves.toEqual([]);

    let check = await stats();
    expect(check.stored).toEqual(check.expected);
    expect(check.chunks).toBe(4);
    await http().delete(`/v1/domains/astronomy/documents/${created[1].body.id}/`).set(auth).expect(204);
    check = await stats();
    expect(check.stored).toEqual(check.expected);
    expect(check.chunks).toBe(3);
    expect(check.stored.map((row: { term: string }) => row.term)).not.toContain('jupit');
    await expect(retriever.search('storm', { domainId }, { limit: 3 })).resolves.toEqual([]);
  }, 60_000);

  it('filters by metadata in the ranking statement', async () => {
    for (const [title, era, year] of [
      ['Apollo 11', 'space race', 1969],
      ['Apollo 17', 'space race', 1972],
      ['Artemis I', 'artemis', 2022],
    ] as const) {
      await http()
        .post('/v1/domains/astronomy/documents/')
        .set(auth)
        .send({ title, content: `${title} flew a crew capsule around the moon.`, metadata: { era, year } })
        .expect(201);
    }
    const search = (filter: unknown) =>
      http().post('/v1/search/').set(auth).send({ query: 'moon capsule', domain: 'astronomy', filter }).expect(200);
    const titles = async (filter: unknown) =>
      ((await search(filter)).body.results as { title: string }[]).map((r) => r.title).sort();
    expect(await titles({ era: 'space race' })).toEqual(['Apollo 11', 'Apollo 17']);
    expect(await titles({ year: { $gte: 1970, $lt: 2030 } })).toEqual(['Apollo 17', 'Artemis I']);
    expect(await titles({ era: { $nin: ['artemis'] }, year: { $exists: true } })).toEqual(['Apollo 11', 'Apollo 17']);
  }, 60_000);
});
