import { createKey, signUp, type SignedInUser, type TestApp } from './support/app.js';
import { KEYS, startWithAliceAndBob } from './support/api-keys.js';
import { API_KEY_MESSAGE, sha256Hex } from './support/core.js';

const SCOPE_MESSAGE = (scope: string) => ({ detail: `This API key lacks the scope "${scope}".` });
const EVENTS = `${KEYS}events/`;

describe('API keys for partners: scopes, limits, credit caps, metadata, audit log', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  async function partnerKey(user: SignedInUser, settings: Record<string, unknown>) {
    const response = await test
      .http()
      .post(KEYS)
      .set(user.auth)
      .send({ name: 'partner', ...settings })
      .expect(201);
    return response.body as { id: string; key: string; key_prefix: string; [field: string]: unknown };
  }

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
      const created = await partnerKey(alice, {
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
      });
    });

    it('accepts a monthly_credit_limit of 0 and an empty scope list', async () => {
      const created = await partnerKey(alice, { monthly_credit_limit: 0, scopes: [] });
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
      const key = await partnerKey(alice, { metadata: { env: 'test' } });
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
      const key = await partnerKey(alice, { scopes: ['documents:read'] });
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
      const key = await partnerKey(alice, { scopes: ['query'] });
      await test.http().get('/v1/billings/subscription/').set(bearer(key.key)).expect(403, SCOPE_MESSAGE('usage:read'));
      await test.http().get('/v1/billings/usage/').set(bearer(key.key)).expect(403, SCOPE_MESSAGE('usage:read'));
      const reader = await partnerKey(alice, { scopes: ['usage:read'] });
      await test.http().get('/v1/billings/subscription/').set({ 'X-API-Key': reader.key }).expect(200);
    });

    it('answers 401 before 403 for a revoked scoped key', async () => {
      const key = await partnerKey(alice, { scopes: ['documents:read'] });
      await test.http().post(`${KEYS}${key.id}/revoke/`).set(alice.auth).expect(200);
      await test
        .http()
        .post('/v1/documents/')
        .set(bearer(key.key))
        .send({ title: 'x', content: 'y' })
        .expect(401, { detail: API_KEY_MESSAGE });
    });

    it('checks the scope before the route validates the body', async () => {
      const key = await partnerKey(alice, { scopes: ['documents:read'] });
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
      const old = await partnerKey(alice, {
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
      // Not across a minute boundary: the window is a fixed minute.
      if (Date.now() % 60_000 > 55_000)
        await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
      const key = await partnerKey(alice, { rate_limit_per_minute: 3 });
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

  describe('monthly credit limit', () => {
    it("answers the key's 402 once its cap is spent, while the organization has credits left", async () => {
      const carol = await signUp(test);
      const key = await partnerKey(carol, { monthly_credit_limit: 2 });
      for (let i = 0; i < 2; i++)
        await test
          .http()
          .post('/v1/query/')
          .set(bearer(key.key))
          .send({ query: `question ${i}` })
          .expect(200);
      const now = new Date();
      const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
        .toISOString()
        .replace('.000Z', 'Z');
      await test.http().post('/v1/query/').set(bearer(key.key)).send({ query: 'one more' }).expect(402, {
        detail: "This API key's monthly credit limit is exhausted.",
        code: 'key_credit_limit_exhausted',
        credits_total: 2,
        credits_used: 2,
        resets_at: resetsAt,
      });
      // The organization still has credits: a JWT (or another key) goes on.
      await test.http().post('/v1/query/').set(carol.auth).send({ query: 'still fine' }).expect(200);
      const listed = (await test.http().get(KEYS).set(carol.auth).expect(200)).body[0];
      expect(listed.credits_used_this_period).toBe(2);
      const organizationId = await organizationOf(carol);
      const { rows } = await test.db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [
        organizationId,
      ]);
      expect(rows[0].credits_used).toBe(3);
    });

    it('is exact under a concurrent burst, within the organization quota', async () => {
      const dave = await signUp(test);
      await test.db.query('UPDATE subscriptions SET monthly_credits = 8 WHERE organization_id = $1', [
        await organizationOf(dave),
      ]);
      const first = await partnerKey(dave, { monthly_credit_limit: 5 });
      const second = await partnerKey(dave, { monthly_credit_limit: 5 });
      const statuses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          test
            .http()
            .post('/v1/query/')
            .set(bearer(i % 2 === 0 ? first.key : second.key))
            .send({ query: `burst ${i}` })
            .then((response) => response.status),
        ),
      );
      expect(statuses.filter((status) => status === 200)).toHaveLength(8);
      expect(statuses.filter((status) => status !== 200).every((status) => status === 402)).toBe(true);
      const { rows } = await test.db.query(
        'SELECT credits_used FROM api_key_credits WHERE api_key_id = ANY($1::uuid[]) ORDER BY credits_used',
        [[first.id, second.id]],
      );
      const used = rows.map((row: { credits_used: number }) => row.credits_used);
      expect(used.reduce((a: number, b: number) => a + b, 0)).toBe(8);
      expect(Math.max(...used)).toBeLessThanOrEqual(5);
    });

    it('starts the count again with a new period', async () => {
      const erin = await signUp(test);
      const key = await partnerKey(erin, { monthly_credit_limit: 1 });
      await test.http().post('/v1/query/').set(bearer(key.key)).send({ query: 'one' }).expect(200);
      await test.http().post('/v1/query/').set(bearer(key.key)).send({ query: 'two' }).expect(402);
      await test.db.query(
        `UPDATE api_key_credits SET period_start = (date_trunc('month', now()) - interval '1 month')::date WHERE api_key_id = $1`,
        [key.id],
      );
      expect((await test.http().get(KEYS).set(erin.auth).expect(200)).body[0].credits_used_this_period).toBe(0);
      await test.http().post('/v1/query/').set(bearer(key.key)).send({ query: 'three' }).expect(200);
    });
  });

  describe('audit log', () => {
    it('refuses an API key with 401', async () => {
      const key = await createKey(test, alice);
      await test.http().get(EVENTS).set(bearer(key.key)).expect(401, {
        detail: 'This endpoint accepts only a JWT access token, not an API key.',
      });
    });

    it('records create, update, rotate and both forms of revoke, newest first, with what changed', async () => {
      const frank = await signUp(test);
      const created = await test
        .http()
        .post(KEYS)
        .set(frank.auth)
        .set('X-Request-Id', 'req-create-1')
        .send({ name: 'audited', scopes: ['query'] })
        .expect(201);
      await test
        .http()
        .patch(`${KEYS}${created.body.id}/update/`)
        .set(frank.auth)
        .send({ rate_limit_per_minute: 600, scopes: ['query', 'chat'], name: 'audited' })
        .expect(200);
      const rotated = await test.http().post(`${KEYS}${created.body.id}/rotate/`).set(frank.auth).expect(201);
      await test.http().post(`${KEYS}${rotated.body.id}/revoke/`).set(frank.auth).expect(200);
      await test.http().post(`${KEYS}${rotated.body.id}/revoke/`).set(frank.auth).expect(200); // changes nothing
      const other = await createKey(test, frank, 'deleted');
      await test.http().delete(`${KEYS}${other.id}/`).set(frank.auth).expect(204);

      const page = await test.http().get(EVENTS).set(frank.auth).expect(200);
      expect(page.body.count).toBe(6);
      expect(page.body.results.map((event: { action: string }) => event.action)).toEqual([
        'revoked',
        'created',
        'revoked',
        'rotated',
        'updated',
        'created',
      ]);
      const [, , revoked, rotation, update, creation] = page.body.results;
      expect(creation).toEqual({
        id: expect.any(String),
        action: 'created',
        key_id: created.body.id,
        key_prefix: created.body.key_prefix,
        actor_user_id: frank.id,
        changes: null,
        request_id: 'req-create-1',
        ip: '127.0.0.1',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
      });
      expect(update.changes).toEqual({ rate_limit_per_minute: [null, 600], scopes: [['query'], ['query', 'chat']] });
      expect(rotation).toMatchObject({
        key_id: created.body.id,
        changes: {
          id: [created.body.id, rotated.body.id],
          key_prefix: [created.body.key_prefix, rotated.body.key_prefix],
        },
      });
      expect(revoked).toMatchObject({ key_id: rotated.body.id, key_prefix: rotated.body.key_prefix, changes: null });

      const text = JSON.stringify(page.body);
      for (const secret of [created.body.key, rotated.body.key, other.key]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(sha256Hex(secret));
      }
      const stored = (await test.db.query('SELECT row_to_json(e)::text AS row FROM api_key_events e')).rows
        .map((row: { row: string }) => row.row)
        .join('\n');
      expect(stored).not.toContain(rotated.body.key);
      expect(stored).not.toContain(sha256Hex(rotated.body.key));

      // Paginated like the other lists; another organization sees none of it.
      const second = await test.http().get(`${EVENTS}?limit=2&offset=2`).set(frank.auth).expect(200);
      expect(second.body.results.map((event: { action: string }) => event.action)).toEqual(['revoked', 'rotated']);
      expect(second.body.next).toBe('/v1/billings/api-keys/events/?limit=2&offset=4');
      const bobs = await test.http().get(EVENTS).set(bob.auth).expect(200);
      expect(bobs.body.results.some((event: { key_id: string }) => event.key_id === created.body.id)).toBe(false);
    });

    it('writes no entry for a refused change', async () => {
      const grace = await signUp(test);
      const key = await createKey(test, grace);
      await test
        .http()
        .patch(`${KEYS}${key.id}/update/`)
        .set(grace.auth)
        .send({ scopes: ['bad'] })
        .expect(400);
      await test.http().post(`${KEYS}${key.id}/revoke/`).set(bob.auth).expect(404);
      const page = await test.http().get(EVENTS).set(grace.auth).expect(200);
      expect(page.body.results.map((event: { action: string }) => event.action)).toEqual(['created']);
    });
  });
});
