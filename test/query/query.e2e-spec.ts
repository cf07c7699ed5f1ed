import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import {
  collectText,
  createDomain,
  creditsUsed,
  organizationIdOf,
  setCredits,
  signInAdmin,
  startWithHandbook,
} from '../support/knowledge.js';

const QUOTA_MESSAGE = 'Credit quota exhausted. Upgrade your plan or wait for your quota to reset.';
const DOMAIN_MESSAGE = 'Your organization does not have access to this domain.';
const NOTHING_FOUND = 'I could not find anything in the knowledge base that answers this question.';

/** Splits an SSE body into its events. */
function parseEvents(body: string): { event: string; data: any }[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null');
      return { event, data };
    });
}

describe('POST /v1/query/', () => {
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

  it('answers from a public domain with cited sources, best first, and spends one credit', async () => {
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'How do I rotate an API key?', domain: 'handbook' })
      .expect(200);
    expect(response.body).toEqual({
      answer: expect.stringContaining('[1]'),
      sources: expect.any(Array),
      domain: 'handbook',
      credits_used: 1,
      credits_remaining: 999,
    });
    const [best] = response.body.sources;
    expect(best).toEqual({
      document_id: handbookIds[0],
      chunk_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Rotating API keys',
      snippet: expect.stringMatching(/rotat/i),
      score: expect.any(Number),
      metadata: { section: 'keys', page: 12 },
      start: 0,
      end: expect.any(Number),
      page: null,
    });
    expect(response.body.answer).toMatch(/rotate/i);
    expect(response.headers['x-credits-remaining']).toBe('999');
    expect(response.headers['x-credits-reset']).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
    const ids = response.body.sources.map((source: { document_id: string }) => source.document_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await creditsUsed(test, user.id)).toBe(1);
  });

  it('works the same with an API key, and the ledger names the key', async () => {
    const key = await createKey(test, user, 'partner');
    await test
      .http()
      .post('/v1/query/')
      .set('X-API-Key', key.key)
      .send({ query: 'monthly credit quota', domain: 'handbook' })
      .expect(200);
    const usage = await test.http().get('/v1/billings/usage/').set(user.auth).expect(200);
    expect(usage.body.results).toEqual([
      expect.objectContaining({
        operation: 'query',
        credits: 1,
        domain: 'handbook',
        user_id: user.id,
        key_prefix: key.key_prefix,
      }),
    ]);
  });

  it('limits the sources to top_k', async () => {
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'key quota documents', domain: 'handbook', top_k: 1 })
      .expect(200);
    expect(response.body.sources).toHaveLength(1);
  });

  it.each([
    [{}, 'query: This field is required.'],
    [{ query: '   ' }, 'query: This field is required.'],
    [{ query: 42 }, 'query: Not a valid string.'],
    [{ query: 'word '.repeat(10_000) }, 'query: Ensure this field has no more than 4000 characters.'],
    [{ query: 'rotate', top_k: 0 }, 'top_k: Ensure this value is greater than or equal to 1.'],
    [{ query: 'rotate', top_k: 101 }, 'top_k: Ensure this value is less than or equal to 100.'],
    [{ query: 'rotate', top_k: '5' }, 'top_k: A valid integer is required.'],
    [{ query: 'rotate', stream: 'yes' }, 'stream: Must be a valid boolean.'],
  ])('refuses %j with 400 naming the field, and spends nothing', async (body, detail) => {
    const response = await test.http().post('/v1/query/').set(user.auth).send(body).expect(400);
    expect(response.body.detail).toBe(detail);
    expect(await creditsUsed(test, user.id)).toBe(0);
  });

  it('answers 404 for an unknown or inactive domain', async () => {
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'nope' })
      .expect(404, { detail: 'Domain "nope" not found.' });
    const admin = await signInAdmin(test);
    await createDomain(test, 'retired', [{ title: 'Old', content: 'Rotate keys yearly.' }]);
    await test.http().patch('/v1/domains/retired/').set(admin.auth).send({ is_active: false }).expect(200);
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'retired' })
      .expect(404, { detail: 'Domain "retired" not found.' });
    expect(await creditsUsed(test, user.id)).toBe(0);
  });

  it('answers 403 for a domain outside allowed_domains, and allows the listed ones', async () => {
    await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: ['other'] })
      .expect(200);
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'handbook' })
      .expect(403, { detail: DOMAIN_MESSAGE });
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'penguins', domain: 'other' }).expect(200);
    await test.http().patch('/v1/organizations/current/').set(user.auth).send({ allowed_domains: [] }).expect(200);
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'penguins', domain: 'other' })
      .expect(403, { detail: DOMAIN_MESSAGE });
    expect(await creditsUsed(test, user.id)).toBe(1);
  });

  it('answers 402 with the quota body once credits run out', async () => {
    await setCredits(test, user.id, 1);
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'rotate', domain: 'handbook' }).expect(200);
    const refused = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'handbook' })
      .expect(402);
    expect(refused.body).toEqual({
      detail: QUOTA_MESSAGE,
      code: 'quota_exhausted',
      credits_total: 1,
      credits_used: 1,
      resets_at: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00Z$/),
    });
    const subscription = await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200);
    expect(subscription.body.current_quota.credits_remaining).toBe(0);
  });

  it('checks in the contract order: 400 before 404 before 403 before 402', async () => {
    await setCredits(test, user.id, 0);
    await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: ['other'] })
      .expect(200);
    await test.http().post('/v1/query/').send({ query: '' }).expect(401);
    await test.http().post('/v1/query/').set(user.auth).send({ query: '', domain: 'nope' }).expect(400);
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'x', domain: 'nope' }).expect(404);
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'x', domain: 'handbook' }).expect(403);
    await test.http().post('/v1/query/').set(user.auth).send({ query: 'x', domain: 'other' }).expect(402);
  });

  it('answers a question of stop words or punctuation with no sources, not an error', async () => {
    for (const query of ['the and of to', '?!?... ---']) {
      const response = await test
        .http()
        .post('/v1/query/')
        .set(user.auth)
        .send({ query, domain: 'handbook' })
        .expect(200);
      expect(response.body.sources).toEqual([]);
      expect(response.body.answer).toBe(NOTHING_FOUND);
    }
  });

  it("searches the organization's private documents without a domain, never another organization's", async () => {
    const other = await signUp(test);
    await test
      .http()
      .post('/v1/documents/')
      .set(other.auth)
      .send({ title: 'Secret plan', content: 'The zeppelin launch happens on Tuesday.' })
      .expect(201);
    await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .send({ title: 'Our plan', content: 'Our zeppelin is grounded for repairs.' })
      .expect(201);
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'When does the zeppelin launch?' })
      .expect(200);
    expect(response.body.domain).toBeNull();
    expect(response.body.sources.map((source: { title: string }) => source.title)).toEqual(['Our plan']);
    expect(JSON.stringify(response.body)).not.toContain('Tuesday');
  });

  it('streams sources, answer deltas and a final event', async () => {
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'How do I rotate an API key?', domain: 'handbook', stream: true })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEvents(response.body as string);
    expect(events[0].event).toBe('sources');
    expect(events[0].data.sources[0].document_id).toBe(handbookIds[0]);
    const deltas = events.filter((event) => event.event === 'delta').map((event) => event.data.text);
    expect(deltas.length).toBeGreaterThan(0);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({
      answer: deltas.join(''),
      domain: 'handbook',
      credits_used: 1,
      credits_remaining: 999,
    });
  });

  it('refuses a streamed request before the first byte, as a normal JSON error', async () => {
    await setCredits(test, user.id, 0);
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'rotate', domain: 'handbook', stream: true })
      .expect(402);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.detail).toBe(QUOTA_MESSAGE);
  });

  it('spends exactly the remaining credits under a burst of concurrent queries', async () => {
    await setCredits(test, user.id, 50);
    const key = await createKey(test, user, 'burst');
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () =>
        test
          .http()
          .post('/v1/query/')
          .set('X-API-Key', key.key)
          .send({ query: 'quota', domain: 'handbook', top_k: 1 })
          .then((r) => r.status),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 402)).toHaveLength(150);
    expect(await creditsUsed(test, user.id)).toBe(50);
    const ledger = await test.db.query('SELECT count(*)::int AS n FROM usage_events WHERE organization_id = $1', [
      await organizationIdOf(test, user.id),
    ]);
    expect(ledger.rows[0].n).toBe(50);
  });

  it('lets an admin query like anyone else', async () => {
    const admin = await signInAdmin(test);
    const response = await test
      .http()
      .post('/v1/query/')
      .set(admin.auth)
      .send({ query: 'rotate', domain: 'handbook' })
      .expect(200);
    expect(response.body.sources[0].title).toBe('Rotating API keys');
  });
});
