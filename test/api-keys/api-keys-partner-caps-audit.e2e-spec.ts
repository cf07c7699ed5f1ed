import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { bearer, KEYS, partnerKey, startWithAliceAndBob } from '../support/api-keys.js';
import { sha256Hex } from '../support/core.js';

const EVENTS = `${KEYS}events/`;

describe('API keys for partners: monthly credit caps and the audit log', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  async function organizationOf(user: SignedInUser): Promise<string> {
    const { rows } = await test.db.query('SELECT organization_id FROM users WHERE id = $1', [user.id]);
    return rows[0].organization_id;
  }

  describe('monthly credit limit', () => {
    it("answers the key's 402 once its cap is spent, while the organization has credits left", async () => {
      const carol = await signUp(test);
      const key = await partnerKey(test, carol, { monthly_credit_limit: 2 });
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
      const first = await partnerKey(test, dave, { monthly_credit_limit: 5 });
      const second = await partnerKey(test, dave, { monthly_credit_limit: 5 });
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
      const key = await partnerKey(test, erin, { monthly_credit_limit: 1 });
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
