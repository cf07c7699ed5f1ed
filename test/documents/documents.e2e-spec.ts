import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { statsOf } from '../support/knowledge.js';

const RECORD_KEYS = [
  'chunk_count',
  'collection_id',
  'content_type',
  'created_at',
  'id',
  'metadata',
  'size_bytes',
  'title',
];

describe('private documents (JSON)', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let aliceOrg: string;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    bob = await signUp(test);
    aliceOrg = (await test.http().get('/auth/users/me/').set(alice.auth).expect(200)).body.organization_id;
  });
  afterAll(() => test.close());

  it('stores a document with its chunks and returns the record', async () => {
    const response = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({
        title: 'Photosynthesis',
        content: 'Plants turn light into sugar.',
        metadata: { source: 'wiki', page: 3 },
      })
      .expect(201);
    expect(Object.keys(response.body).sort()).toEqual(RECORD_KEYS);
    expect(response.body).toMatchObject({
      title: 'Photosynthesis',
      metadata: { source: 'wiki', page: 3 },
      content_type: 'text/plain',
      size_bytes: 29,
      chunk_count: 1,
    });
    expect(response.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const stored = await test.db.query('SELECT organization_id, domain_id, content FROM documents WHERE id = $1', [
      response.body.id,
    ]);
    expect(stored.rows).toEqual([
      { organization_id: aliceOrg, domain_id: null, content: 'Plants turn light into sugar.' },
    ]);
    const chunks = await test.db.query(
      'SELECT scope_id, ordinal, content, token_count FROM document_chunks WHERE document_id = $1',
      [response.body.id],
    );
    // "Photosynthesis" + plant, turn, light, sugar ("into" is a stop word).
    expect(chunks.rows).toEqual([
      { scope_id: aliceOrg, ordinal: 0, content: 'Plants turn light into sugar.', token_count: 5 },
    ]);
  });

  it('accepts an API key as well as a JWT', async () => {
    const key = await createKey(test, alice);
    const response = await test
      .http()
      .post('/v1/documents/')
      .set('X-API-Key', key.key)
      .send({ title: 'Via key', content: 'Some text.' })
      .expect(201);
    await test.http().get(`/v1/documents/${response.body.id}/`).set(alice.auth).expect(200);
  });

  it.each([
    [{ content: 'x' }, 'title: This field is required.'],
    [{ title: '  ', content: 'x' }, 'title: This field is required.'],
    [{ title: 'x'.repeat(301), content: 'x' }, 'title: Ensure this field has no more than 300 characters.'],
    [{ title: 'T' }, 'content: This field is required.'],
    [{ title: 'T', content: 42 }, 'content: Not a valid string.'],
    [
      { title: 'T', content: 'x', metadata: [1] },
      'metadata: Must be a flat JSON object whose values are strings or numbers.',
    ],
    [
      { title: 'T', content: 'x', metadata: { nested: { a: 1 } } },
      'metadata: Must be a flat JSON object whose values are strings or numbers.',
    ],
    [
      { title: 'T', content: 'x', metadata: { ok: true } },
      'metadata: Must be a flat JSON object whose values are strings or numbers.',
    ],
    [
      { title: 'T', content: 'x', metadata: 'text' },
      'metadata: Must be a flat JSON object whose values are strings or numbers.',
    ],
    [{ title: 'T', content: 'a\u0000b' }, 'content: Null characters are not allowed.'],
    [{ title: 'T\u0000', content: 'x' }, 'title: Null characters are not allowed.'],
    [{ title: 'T', content: 'x', metadata: { k: 'v\u0000' } }, 'metadata: Null characters are not allowed.'],
  ])('refuses %j with a 400 naming the field', async (body, detail) => {
    const response = await test.http().post('/v1/documents/').set(alice.auth).send(body).expect(400);
    expect(response.body.detail).toBe(detail);
    expect(response.body.fields[detail.split(':')[0]]).toEqual([detail.slice(detail.indexOf(': ') + 2)]);
  });

  it('refuses a body that is not an object', async () => {
    const response = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send([{ title: 'a' }])
      .expect(400);
    expect(response.body.detail).toBe('body: Expected a JSON object.');
  });

  it('needs credentials', async () => {
    await test.http().post('/v1/documents/').send({ title: 'T', content: 'x' }).expect(401);
    await test.http().get('/v1/documents/').expect(401);
  });

  it('lists newest first with limit/offset pagination and no content', async () => {
    const user = await signUp(test);
    for (const n of [1, 2, 3])
      await test
        .http()
        .post('/v1/documents/')
        .set(user.auth)
        .send({ title: `Doc ${n}`, content: `Body ${n}` })
        .expect(201);
    const first = await test.http().get('/v1/documents/?limit=2').set(user.auth).expect(200);
    expect(first.body.count).toBe(3);
    expect(first.body.results.map((d: { title: string }) => d.title)).toEqual(['Doc 3', 'Doc 2']);
    expect(Object.keys(first.body.results[0]).sort()).toEqual(RECORD_KEYS);
    expect(first.body.previous).toBeNull();
    expect(first.body.next).toBe('/v1/documents/?limit=2&offset=2');
    const second = await test.http().get('/v1/documents/?limit=2&offset=2').set(user.auth).expect(200);
    expect(second.body.results.map((d: { title: string }) => d.title)).toEqual(['Doc 1']);
    expect(second.body.next).toBeNull();
    expect(second.body.previous).toMatch(/\/v1\/documents\/\?limit=2&offset=0$/);
    // Past the last page: no results, and still the count.
    const past = await test.http().get('/v1/documents/?limit=2&offset=5').set(user.auth).expect(200);
    expect(past.body).toMatchObject({ count: 3, results: [], next: null });
    const bad = await test.http().get('/v1/documents/?limit=abc').set(user.auth).expect(400);
    expect(bad.body.detail).toBe('limit: Must be a whole number from 1 to 100.');
  });

  it('returns one document with its content', async () => {
    const created = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({ title: 'Full', content: 'The whole text.' })
      .expect(201);
    const response = await test.http().get(`/v1/documents/${created.body.id}`).set(alice.auth).expect(200);
    expect(response.body).toEqual({ ...created.body, content: 'The whole text.' });
  });

  it("hides another organization's document: 404 on read and delete, and it stays", async () => {
    const created = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({ title: 'Secret', content: 'Alice only.' })
      .expect(201);
    const read = await test.http().get(`/v1/documents/${created.body.id}/`).set(bob.auth).expect(404);
    expect(read.body).toEqual({ detail: `Document "${created.body.id}" not found.` });
    await test.http().delete(`/v1/documents/${created.body.id}/`).set(bob.auth).expect(404);
    const bobList = await test.http().get('/v1/documents/').set(bob.auth).expect(200);
    expect(bobList.body.results.map((d: { id: string }) => d.id)).not.toContain(created.body.id);
    await test.http().get(`/v1/documents/${created.body.id}/`).set(alice.auth).expect(200);
  });

  it('answers 404 for an id that is not a UUID or does not exist', async () => {
    await test.http().get('/v1/documents/not-a-uuid/').set(alice.auth).expect(404);
    await test.http().delete('/v1/documents/00000000-0000-4000-8000-000000000000/').set(alice.auth).expect(404);
  });

  it('deletes a document with its chunks and takes it out of the statistics', async () => {
    const user = await signUp(test);
    const org = (await test.http().get('/auth/users/me/').set(user.auth).expect(200)).body.organization_id;
    const keep = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .send({ title: 'Keep', content: 'Mitochondria make energy.' })
      .expect(201);
    const gone = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .send({ title: 'Gone', content: 'Ribosomes make proteins; zebrafish swim.' })
      .expect(201);
    await test.http().delete(`/v1/documents/${gone.body.id}/`).set(user.auth).expect(204).expect('');
    expect(
      (await test.db.query('SELECT count(*)::int AS n FROM documents WHERE id = $1', [gone.body.id])).rows[0].n,
    ).toBe(0);
    expect(
      (await test.db.query('SELECT count(*)::int AS n FROM document_chunks WHERE document_id = $1', [gone.body.id]))
        .rows[0].n,
    ).toBe(0);
    const stats = await statsOf(test, org);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.map((row) => row.term)).not.toContain('zebrafish');
    expect(stats.stored).toContainEqual({ term: 'make', df: 1 });
    expect(stats.corpus).toEqual(stats.expectedCorpus);
    expect(stats.corpus).toEqual({ chunk_count: 1, total_tokens: 4 });
    await test.http().delete(`/v1/documents/${gone.body.id}/`).set(user.auth).expect(404);
    await test.http().get(`/v1/documents/${keep.body.id}/`).set(user.auth).expect(200);
  });

  it('chunks a long document at paragraph and sentence boundaries, each chunk within a few hundred words', async () => {
    const paragraph = (n: number) =>
      Array.from(
        { length: 12 },
        (_, i) => `Sentence ${n}.${i} explains how enzymes catalyse reactions in living cells quickly.`,
      ).join(' ');
    const content = Array.from({ length: 10 }, (_, n) => paragraph(n)).join('\n\n');
    const created = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({ title: 'Enzymes', content })
      .expect(201);
    const chunks = await test.db.query('SELECT content FROM document_chunks WHERE document_id = $1 ORDER BY ordinal', [
      created.body.id,
    ]);
    expect(created.body.chunk_count).toBe(chunks.rows.length);
    expect(chunks.rows.length).toBeGreaterThanOrEqual(4);
    for (const { content: chunk } of chunks.rows) {
      const words = chunk.split(/\s+/).length;
      expect(words).toBeLessThanOrEqual(400);
      expect(chunk).toMatch(/^Sentence \d+\.\d+ /); // starts at a sentence
      expect(chunk).toMatch(/quickly\.$/); // ends at one
    }
    // Consecutive chunks overlap: the next one starts with a sentence the previous one ends with.
    const [first, second] = chunks.rows.map((row: { content: string }) => row.content);
    expect(first).toContain(second.split('. ')[0]);
  });
});
