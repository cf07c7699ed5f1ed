import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { statsOf } from '../support/knowledge.js';

const BATCH = '/v1/documents/batch/';

describe('POST /v1/documents/batch/', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let aliceOrg: string;
  let bobOrg: string;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    bob = await signUp(test);
    const organizationOf = async (user: SignedInUser) =>
      (await test.http().get('/auth/users/me/').set(user.auth).expect(200)).body.organization_id as string;
    aliceOrg = await organizationOf(alice);
    bobOrg = await organizationOf(bob);
  });
  afterAll(() => test.close());

  const documentCount = async (user: SignedInUser) =>
    (await test.http().get('/v1/documents/').set(user.auth).expect(200)).body.count as number;
  const creditsUsed = async (user: SignedInUser) =>
    (await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200)).body.credits_used as number;

  /** Runs a refused batch and checks that nothing was stored and nothing was spent. */
  async function expectNothingStored(work: () => Promise<unknown>) {
    const before = { documents: await documentCount(bob), credits: await creditsUsed(bob) };
    const chunks = async () =>
      Number((await test.db.query('SELECT count(*) FROM document_chunks WHERE scope_id = $1', [bobOrg])).rows[0].count);
    const chunksBefore = await chunks();
    await work();
    expect({ documents: await documentCount(bob), credits: await creditsUsed(bob) }).toEqual(before);
    expect(await chunks()).toBe(chunksBefore);
  }

  it('stores the documents in the order given, searchable (with an API key)', async () => {
    const key = await createKey(test, alice);
    const documents = Array.from({ length: 30 }, (_, i) => ({
      title: `Note ${i}`,
      content: `Entry ${i} about the walrus number w${i}. 🦭`,
      ...(i % 2 === 0 ? { metadata: { n: i } } : {}),
    }));
    const response = await test.http().post(BATCH).set('X-API-Key', key.key).send({ documents }).expect(201);
    expect(Object.keys(response.body)).toEqual(['results']);
    expect(response.body.results.map((d: { title: string }) => d.title)).toEqual(documents.map((d) => d.title));
    expect(response.body.results[0]).toMatchObject({ metadata: { n: 0 }, content_type: 'text/plain', chunk_count: 1 });
    expect(response.body.results[1].metadata).toEqual({});
    expect(await documentCount(alice)).toBe(30);
    const stored = await test.http().get(`/v1/documents/${response.body.results[7].id}/`).set(alice.auth).expect(200);
    expect(stored.body.content).toBe('Entry 7 about the walrus number w7. 🦭');
    const stats = await statsOf(test, aliceOrg);
    expect(stats.corpus).toEqual(stats.expectedCorpus);
    expect(stats.corpus?.chunk_count).toBe(30);
    expect(stats.stored).toEqual(stats.expected);
    const query = await test.http().post('/v1/query/').set(alice.auth).send({ query: 'walrus w12' }).expect(200);
    expect(query.body.sources[0].document_id).toBe(response.body.results[12].id);
  });

  it('refuses a batch with one bad document, naming it, and stores none', async () => {
    const documents = Array.from({ length: 5 }, (_, i) => ({ title: `Good ${i}`, content: `Fine text ${i}.` }));
    documents[3] = { title: 'Bad' } as (typeof documents)[number];
    await expectNothingStored(async () => {
      const response = await test.http().post(BATCH).set(bob.auth).send({ documents }).expect(400);
      expect(response.body).toEqual({
        detail: 'documents[3].content: This field is required.',
        fields: { 'documents[3].content': ['This field is required.'] },
      });
    });
  });

  it('names every bad document, the first one in detail', async () => {
    const documents = [
      { title: 'Good', content: 'Fine.' },
      'not an object',
      { title: 'x'.repeat(301), content: 'Fine.', metadata: { nested: { no: 1 } } },
    ];
    await expectNothingStored(async () => {
      const response = await test.http().post(BATCH).set(bob.auth).send({ documents }).expect(400);
      expect(response.body.detail).toBe('documents[1]: Expected a JSON object.');
      expect(Object.keys(response.body.fields)).toEqual([
        'documents[1]',
        'documents[2].title',
        'documents[2].metadata',
      ]);
    });
  });

  it.each([
    ['empty', [], 'documents: This list may not be empty.'],
    [
      '101 documents',
      Array.from({ length: 101 }, (_, i) => ({ title: `T${i}`, content: 'x' })),
      'documents: Ensure this field has no more than 100 elements.',
    ],
    ['not a list', { title: 'T', content: 'x' }, 'documents: Expected a list of documents.'],
    ['a string', 'documents', 'documents: Expected a list of documents.'],
    ['missing', undefined, 'documents: This field is required.'],
  ])('refuses a batch that is %s', async (_, documents, detail) => {
    await expectNothingStored(async () => {
      const response = await test.http().post(BATCH).set(bob.auth).send({ documents }).expect(400);
      expect(response.body.detail).toBe(detail);
    });
  });

  it('refuses a batch over the body limit with a 413 and stores none', async () => {
    const documents = [1, 2].map((i) => ({ title: `Big ${i}`, content: 'Long text. '.repeat(60_000) }));
    await expectNothingStored(async () => {
      const response = await test.http().post(BATCH).set(bob.auth).send({ documents }).expect(413);
      expect(response.body).toEqual({ detail: expect.stringMatching(/too large/i) });
    });
  });

  it('refuses a body that is not an object, and an anonymous caller', async () => {
    const list = await test
      .http()
      .post(BATCH)
      .set(bob.auth)
      .send([{ title: 'T', content: 'x' }])
      .expect(400);
    expect(list.body.detail).toBe('body: Expected a JSON object.');
    await test
      .http()
      .post(BATCH)
      .send({ documents: [{ title: 'T', content: 'x' }] })
      .expect(401);
  });

  it('keeps documents private to their organization', async () => {
    const response = await test
      .http()
      .post(BATCH)
      .set(bob.auth)
      .send({ documents: [{ title: 'Bob only', content: 'Secret narwhal plans.' }] })
      .expect(201);
    await test.http().get(`/v1/documents/${response.body.results[0].id}/`).set(alice.auth).expect(404);
  });
});
