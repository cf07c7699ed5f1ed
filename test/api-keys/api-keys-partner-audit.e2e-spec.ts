import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { bearer, KEYS, startWithAliceAndBob } from '../support/api-keys.js';
import { sha256Hex } from '../support/core.js';

const EVENTS = `${KEYS}events/`;

describe('API keys for partners: the audit log', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

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
        actor_email: frank.email,
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
