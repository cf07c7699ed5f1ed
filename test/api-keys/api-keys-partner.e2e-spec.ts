import { createKey, type SignedInUser, type TestApp } from '../support/app.js';
import { bearer, KEYS, partnerKey, startWithAliceAndBob } from '../support/api-keys.js';
import { API_KEY_MESSAGE, freshMinute } from '../support/core.js';

const SCOPE_MESSAGE = (scope: string) => ({ detail: `This API key lacks the scope "${scope}".` });

describe('API keys for partners: settings, scopes, rotation, per-key rate limits', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    ({ test, alice } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  async function organizationOf(user: SignedInUser): Promise<string> {
    const { rows } = await test.db.query('SELECT organization_id FROM users WHERE id = $1', [user.id]);
    return rows[0].organization_id;
  }

  const expectFieldError = async (body: Record<string, unknown>, field: string) => {
    const response = await test
      .http()
      .post(KEYS)
      .set(alice.auth)
      .send({ name: 'bad', ...body })
      .expect(400);
    expect(Object.keys(response.body.fields)).toEqual([field]);
    expect(response.body.detail).toBe(`${field}: ${response.body.fields[field][0]}`);
  };

  describe('create and the record', () => {
    it('stores scopes, limits and metadata, and every record carries them', async () => {
      const created = await partnerKey(test, alice, {
        scopes: ['query', 'documents:read'],
        rate_limit_per_minute: 600,
        monthly_credit_limit: 500,
        metadata: { customer_id: 'cus_8f2k', tier: 2 },
      });
      expect(created).toMatchObject({
        scopes: ['query', 'documents:read'],
        rate_limit_per_minute: 600,
        monthly_credit_limit: 500,
        credits_used_this_period: 0,
        metadata: { customer_id: 'cus_8f2k', tier: 2 },
        replaced_by: null,
        grace_until: null,
      });
      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find(
        (key: { id: string }) => key.id === created.id,
      );
      expect(listed).toMatchObject({
        scopes: ['query', 'documents:read'],
        metadata: { customer_id: 'cus_8f2k', tier: 2 },
      });
    });

    it('defaults to every scope, the default limit, no cap and empty metadata', async () => {
      const created = await createKey(test, alice, 'plain');
      expect(created).toMatchObject({
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: null,
        credits_used_this_period: 0,
        metadata: {},
        replaced_by: null,
        grace_until: null,
      });
    });

    it('accepts a monthly_credit_limit of 0 and an empty scope list', async () => {
      const created = await partnerKey(test, alice, { monthly_credit_limit: 0, scopes: [] });
      expect(created).toMatchObject({ monthly_credit_limit: 0, scopes: [] });
    });
  });

  describe('bad input is a 400 naming the field', () => {
    it('refuses an unknown scope', () => expectFieldError({ scopes: ['query', 'admin'] }, 'scopes'));
    it('refuses a duplicate scope', () => expectFieldError({ scopes: ['query', 'query'] }, 'scopes'));
    it('refuses scopes that are not a list', () => expectFieldError({ scopes: 'query' }, 'scopes'));
    it('refuses scopes that are an object', () => expectFieldError({ scopes: { query: true } }, 'scopes'));

    it.each([0, -1, 1.5, '10', 1_000_001])('refuses rate_limit_per_minute %p', (value) =>
      expectFieldError({ rate_limit_per_minute: value }, 'rate_limit_per_minute'),
    );
    it.each([-1, 1.5, '10', 2 ** 31])('refuses monthly_credit_limit %p', (value) =>
      expectFieldError({ monthly_credit_limit: value }, 'monthly_credit_limit'),
    );

    it('refuses nested metadata', () => expectFieldError({ metadata: { customer: { id: 'x' } } }, 'metadata'));
    it('refuses metadata holding a list', () => expectFieldError({ metadata: { tags: ['a'] } }, 'metadata'));
    it('refuses metadata that is not an object', () => expectFieldError({ metadata: ['a'] }, 'metadata'));
    it('refuses metadata with more than 16 keys', () =>
      expectFieldError(
        { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])) },
        'metadata',
      ));
    it('refuses metadata over 1024 bytes of JSON', () =>
      expectFieldError({ metadata: { note: 'x'.repeat(1100) } }, 'metadata'));

    it('names the scope in the message', async () => {
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .send({ name: 'bad', scopes: ['admin'] })
        .expect(400);
      expect(response.body.detail).toBe(
        'scopes: "admin" is not a valid scope; valid scopes: query, documents:read, documents:write, chat, usage:read, organization:write.',
      );
    });

    it('stores nothing for a refused create', async () => {
      const before = (await test.db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
      await expectFieldError({ scopes: ['nope'] }, 'scopes');
      expect((await test.db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(before);
    });
  });

  describe('update', () => {
    it('keeps an empty body a 400 naming expires_at', async () => {
      const key = await createKey(test, alice);
      await test
        .http()
        .patch(`${KEYS}${key.id}/update/`)
        .set(alice.auth)
        .send({})
        .expect(400, {
          detail: 'expires_at: This field is required.',
          fields: { expires_at: ['This field is required.'] },
        });
    });

    it('changes only the fields given, and the change reaches a cached key at once', async () => {
      const key = await partnerKey(test, alice, { metadata: { env: 'test' } });
      await test.http().get('/v1/documents/').set(bearer(key.key)).expect(200); // cached now
      const updated = await test
        .http()
        .patch(`${KEYS}${key.id}/update/`)
        .set(alice.auth)
        .send({ scopes: ['query'], name: 'renamed' })
        .expect(200);
      expect(updated.body).toMatchObject({
        name: 'renamed',
        scopes: ['query'],
        metadata: { env: 'test' },
        expires_at: null,
      });
      expect(updated.body).not.toHaveProperty('key');
      await test.http().get('/v1/documents/').set(bearer(key.key)).expect(403, SCOPE_MESSAGE('documents:read'));
      await test.http().patch(`${KEYS}${key.id}/update/`).set(alice.auth).send({ scopes: null }).expect(200);
      await test.http().get('/v1/documents/').set(bearer(key.key)).expect(200);
    });

    it('validates the settings as create does', async () => {
      const key = await createKey(test, alice);
      const response = await test
        .http()
        .patch(`${KEYS}${key.id}/update/`)
        .set(alice.auth)
        .send({ rate_limit_per_minute: 0 })
        .expect(400);
      expect(Object.keys(response.body.fields)).toEqual(['rate_limit_per_minute']);
    });
  });

  describe('scopes', () => {
    it('refuses a documents:read key on every write route with the 403, changing nothing', async () => {
      const organizationId = await organizationOf(alice);
      const document = await test
        .http()
        .post('/v1/documents/')
        .set(alice.auth)
        .send({ title: 'Kept', content: 'This document must survive the scoped key.' })
        .expect(201);
      const session = await test.http().post('/v1/chat/sessions/').set(alice.auth).send({ title: 'kept' }).expect(201);
      const key = await partnerKey(test, alice, { scopes: ['documents:read'] });
      const auth = bearer(key.key);
      const snapshot = async () => ({
        documents: (
          await test.db.query('SELECT id, title FROM documents WHERE organization_id = $1 ORDER BY id', [
            organizationId,
          ])
        ).rows,
        sessions: (await test.db.query('SELECT id, title FROM chat_sessions ORDER BY id')).rows,
        messages: (await test.db.query('SELECT count(*)::int AS n FROM chat_messages')).rows[0].n,
        organization: (
          await test.db.query('SELECT name, allowed_domains FROM organizations WHERE id = $1', [organizationId])
        ).rows,
        credits: (
          await test.db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [organizationId])
        ).rows,
        usage: (await test.db.query('SELECT count(*)::int AS n FROM usage_events')).rows[0].n,
      });
      const before = await snapshot();

      const refusals: [string, () => Promise<unknown>][] = [
        [
          'documents:write',
          () =>
            test
              .http()
              .post('/v1/documents/')
              .set(auth)
              .send({ title: 'x', content: 'y' })
              .expect(403, SCOPE_MESSAGE('documents:write')),
        ],
        [
          'documents:write',
          () =>
            test
              .http()
              .delete(`/v1/documents/${document.body.id}/`)
              .set(auth)
              .expect(403, SCOPE_MESSAGE('documents:write')),
        ],
        [
          'query',
          () =>
            test.http().post('/v1/query/').set(auth).send({ query: 'anything' }).expect(403, SCOPE_MESSAGE('query')),
        ],
        [
          'chat',
          () =>
            test.http().post('/v1/chat/sessions/').set(auth).send({ title: 'x' }).expect(403, SCOPE_MESSAGE('chat')),
        ],
        [
          'chat',
          () =>
            test
              .http()
              .patch(`/v1/chat/sessions/${session.body.id}/`)
              .set(auth)
              .send({ title: 'changed' })
              .expect(403, SCOPE_MESSAGE('chat')),
        ],
        [
          'chat',
          () =>
            test.http().delete(`/v1/chat/sessions/${session.body.id}/`).set(auth).expect(403, SCOPE_MESSAGE('chat')),
        ],
        [
          'query',
          () =>
            test
              .http()
              .post(`/v1/chat/sessions/${session.body.id}/messages/`)
              .set(auth)
              .send({ content: 'hi' })
              .expect(403, SCOPE_MESSAGE('query')),
        ],
        [
          'organization:write',
          () =>
            test
              .http()
              .patch('/v1/organizations/current/')
              .set(auth)
              .send({ name: 'Taken over' })
              .expect(403, SCOPE_MESSAGE('organization:write')),
        ],
      ];
      for (const [, refuse] of refusals) await refuse();
      expect(await snapshot()).toEqual(before);
      // What it was given still works, and so do the routes that need no scope.
      await test.http().get('/v1/documents/').set(auth).expect(200);
      await test.http().get(`/v1/documents/${document.body.id}/`).set(auth).expect(200);
      await test.http().get('/auth/users/me/').set(auth).expect(200);
    });

    it('refuses usage and subscription to a key without usage:read', async () => {
      const key = await partnerKey(test, alice, { scopes: ['query'] });
      await test.http().get('/v1/billings/subscription/').set(bearer(key.key)).expect(403, SCOPE_MESSAGE('usage:read'));
      await test.http().get('/v1/billings/usage/').set(bearer(key.key)).expect(403, SCOPE_MESSAGE('usage:read'));
      const reader = await partnerKey(test, alice, { scopes: ['usage:read'] });
      await test.http().get('/v1/billings/subscription/').set({ 'X-API-Key': reader.key }).expect(200);
    });

    it('answers 401 before 403 for a revoked scoped key', async () => {
      const key = await partnerKey(test, alice, { scopes: ['documents:read'] });
      await test.http().post(`${KEYS}${key.id}/revoke/`).set(alice.auth).expect(200);
      await test
        .http()
        .post('/v1/documents/')
        .set(bearer(key.key))
        .send({ title: 'x', content: 'y' })
        .expect(401, { detail: API_KEY_MESSAGE });
    });

    it('checks the scope before the route validates the body', async () => {
      const key = await partnerKey(test, alice, { scopes: ['documents:read'] });
      await test.http().post('/v1/query/').set(bearer(key.key)).send({}).expect(403, SCOPE_MESSAGE('query'));
    });

    it('never scopes a JWT', async () => {
      await test.http().get('/v1/billings/usage/').set(alice.auth).expect(200);
    });

    it("documents each route's scope in the OpenAPI document", async () => {
      const document = (await test.http().get('/openapi.json').expect(200)).body;
      expect(document.paths['/v1/documents/'].post['x-required-scope']).toBe('documents:write');
      expect(document.paths['/v1/documents/'].get['x-required-scope']).toBe('documents:read');
      expect(document.paths['/v1/query/'].post['x-required-scope']).toBe('query');
      expect(document.paths['/v1/documents/'].post.responses['403']).toBeDefined();
    });
  });

  describe('rotation', () => {
    it("copies scopes, limits, metadata and this period's spend to the new key", async () => {
      const old = await partnerKey(test, alice, {
        scopes: ['query'],
        rate_limit_per_minute: 77,
        monthly_credit_limit: 9,
        metadata: { customer_id: 'c1' },
      });
      await test.http().post('/v1/query/').set(bearer(old.key)).send({ query: 'spend one' }).expect(200);
      const rotated = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).expect(201);
      expect(rotated.body).toMatchObject({
        scopes: ['query'],
        rate_limit_per_minute: 77,
        monthly_credit_limit: 9,
        credits_used_this_period: 1,
        metadata: { customer_id: 'c1' },
        rotated_from: old.id,
      });
      await test
        .http()
        .get('/v1/documents/')
        .set(bearer(rotated.body.key))
        .expect(403, SCOPE_MESSAGE('documents:read'));
    });
  });

  describe('per-key rate limit', () => {
    it("answers 429 past the key's own limit, with RateLimit-Limit showing it", async () => {
      await freshMinute();
      const key = await partnerKey(test, alice, { rate_limit_per_minute: 3 });
      for (let i = 0; i < 3; i++) {
        const ok = await test.http().get('/auth/users/me/').set(bearer(key.key)).expect(200);
        expect(ok.headers['ratelimit-limit']).toBe('3');
        expect(ok.headers['ratelimit-policy']).toBe('3;w=60');
      }
      const refused = await test.http().get('/auth/users/me/').set(bearer(key.key)).expect(429);
      expect(refused.headers['ratelimit-limit']).toBe('3');
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      // Another key of the same user keeps the default.
      const plain = await createKey(test, alice);
      const other = await test.http().get('/auth/users/me/').set(bearer(plain.key)).expect(200);
      expect(other.headers['ratelimit-limit']).toBe('1200');
    });
  });
});
