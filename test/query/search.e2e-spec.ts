import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { creditsUsed, organizationIdOf, setCredits, startWithHandbook } from '../support/knowledge.js';

const QUOTA_MESSAGE = 'Credit quota exhausted. Upgrade your plan or wait for your quota to reset.';
const DOMAIN_MESSAGE = 'Your organization does not have access to this domain.';

async function ledger(test: TestApp, userId: string) {
  const { rows } = await test.db.query(
    'SELECT operation, credits, domain FROM usage_events WHERE organization_id = $1 ORDER BY created_at',
    [await organizationIdOf(test, userId)],
  );
  return rows;
}

describe('POST /v1/search/ (free: SEARCH_CREDIT_COST 0, the default)', () => {
  let test: TestApp;
  let user: SignedInUser;
  let handbookIds: string[];

  beforeAll(async () => {
    ({ test, handbookIds } = await startWithHandbook());
  });
  afterAll(() => test.close());
  beforeEach(async () => {
    user = await signUp(test);
  });

  it("returns the passages a query would cite, as the query's own source objects, and spends nothing", async () => {
    const question = { query: 'How do I rotate an API key?', domain: 'handbook', top_k: 2 };
    const search = await test.http().post('/v1/search/').set(user.auth).send(question).expect(200);
    expect(search.body).toEqual({ results: expect.any(Array), domain: 'handbook' });
    expect(search.body.results[0]).toEqual({
      document_id: handbookIds[0],
      chunk_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Rotating API keys',
      snippet: expect.stringContaining('**rotate**'),
      score: expect.any(Number),
      metadata: { section: 'keys', page: 12 },
      start: 0,
      end: expect.any(Number),
      page: null,
    });
    expect(search.headers['x-credits-remaining']).toBeUndefined();
    const query = await test.http().post('/v1/query/').set(user.auth).send(question).expect(200);
    expect(search.body.results).toEqual(query.body.sources);
    expect(await ledger(test, user.id)).toEqual([{ operation: 'query', credits: 1, domain: 'handbook' }]);
  });

  it('searches the private documents without a domain, with an API key too, honouring top_k', async () => {
    for (const n of [1, 2, 3]) {
      await test
        .http()
        .post('/v1/documents/')
        .set(user.auth)
        .send({ title: `Falcon notes ${n}`, content: `Falcons hunt at dawn. Note ${n}.` })
        .expect(201);
    }
    const key = await createKey(test, user);
    const response = await test
      .http()
      .post('/v1/search/')
      .set('X-API-Key', key.key)
      .send({ query: 'falcons hunting', top_k: 2 })
      .expect(200);
    expect(response.body.domain).toBeNull();
    expect(response.body.results.map((r: { title: string }) => r.title)).toHaveLength(2);
  });

  it('answers 400 naming query for a blank or missing query', async () => {
    for (const body of [{ query: '   ' }, {}, { query: '' }]) {
      const response = await test.http().post('/v1/search/').set(user.auth).send(body).expect(400);
      expect(response.body.detail).toBe('query: This field is required.');
    }
  });

  it('is free even with no credits left', async () => {
    await setCredits(test, user.id, 0);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'quota', domain: 'handbook' }).expect(200);
  });

  it('checks in the contract order: 401, 400, 404, 403', async () => {
    await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: ['other'] })
      .expect(200);
    await test.http().post('/v1/search/').send({ query: '' }).expect(401);
    await test.http().post('/v1/search/').set(user.auth).send({ query: '', domain: 'nope' }).expect(400);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'x', domain: 'nope' }).expect(404);
    await test
      .http()
      .post('/v1/search/')
      .set(user.auth)
      .send({ query: 'x', domain: 'handbook' })
      .expect(403, { detail: DOMAIN_MESSAGE });
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'penguins', domain: 'other' }).expect(200);
  });
});

describe('POST /v1/search/ (metered: SEARCH_CREDIT_COST 2)', () => {
  let test: TestApp;
  let user: SignedInUser;

  beforeAll(async () => {
    ({ test } = await startWithHandbook({ SEARCH_CREDIT_COST: '2' }));
  });
  afterAll(() => test.close());
  beforeEach(async () => {
    user = await signUp(test);
  });

  it('spends its own cost with the credit headers and a ledger line of its own, beside queries at theirs', async () => {
    const search = await test
      .http()
      .post('/v1/search/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'handbook' })
      .expect(200);
    expect(search.headers['x-credits-remaining']).toBe('998');
    expect(search.headers['x-credits-reset']).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
    await Promise.all([
      test.http().post('/v1/search/').set(user.auth).send({ query: 'quota' }).expect(200),
      test.http().post('/v1/query/').set(user.auth).send({ query: 'quota' }).expect(200),
    ]);
    expect(await creditsUsed(test, user.id)).toBe(5);
    const lines = await ledger(test, user.id);
    expect(lines).toHaveLength(3);
    expect(lines).toEqual(
      expect.arrayContaining([
        { operation: 'search', credits: 2, domain: 'handbook' },
        { operation: 'search', credits: 2, domain: null },
        { operation: 'query', credits: 1, domain: null },
      ]),
    );
    const usage = await test.http().get('/v1/billings/usage/').set(user.auth).expect(200);
    expect(usage.body.results.map((r: { operation: string }) => r.operation)).toContain('search');
  });

  it('answers 402 with the quota body when the credits left are fewer than a search costs', async () => {
    await setCredits(test, user.id, 3);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'rotate' }).expect(200);
    const refused = await test.http().post('/v1/search/').set(user.auth).send({ query: 'rotate' }).expect(402);
    expect(refused.body).toEqual({
      detail: QUOTA_MESSAGE,
      code: 'quota_exhausted',
      credits_total: 3,
      credits_used: 2,
      resets_at: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00Z$/),
    });
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'rotate' }).expect(200);
  });

  it('checks in the contract order: 400 before 404 before 403 before 402', async () => {
    await setCredits(test, user.id, 0);
    await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: ['other'] })
      .expect(200);
    await test.http().post('/v1/search/').set(user.auth).send({ query: ' ', domain: 'nope' }).expect(400);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'x', domain: 'nope' }).expect(404);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'x', domain: 'handbook' }).expect(403);
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'x', domain: 'other' }).expect(402);
    expect(await ledger(test, user.id)).toEqual([]);
  });
});
