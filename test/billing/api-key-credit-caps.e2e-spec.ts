import { bearer, KEYS, partnerKey } from '../support/api-keys.js';
import { signUp, type SignedInUser, startTestApp, type TestApp } from '../support/app.js';

/**
 * An API key's `monthly_credit_limit` through the API: spent and capped in the quota's statement
 * (`SubscriptionsRepository.spendBatch`, this room's SQL; its medium test is quota.medium-spec.ts).
 */
describe("API keys' monthly credit caps", () => {
  let test: TestApp;

  beforeAll(async () => {
    test = await startTestApp();
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
});
