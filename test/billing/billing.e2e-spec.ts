import { QuotaService, type Reservation } from '../../src/billing/quota.service.js';
import { QuotaExhaustedError } from '../../src/common/errors.js';
import type { Principal } from '../../src/common/principal.js';
import { ADMIN, signIn, signUp, startTestApp, type TestApp } from '../support/app.js';

function monthStart(offsetMonths = 0): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offsetMonths, 1))
    .toISOString()
    .replace('.000Z', 'Z');
}

/** The principal of a user's JWT, for spending through QuotaService directly. */
const jwtCaller = (userId: string, organizationId: string): Principal => ({
  kind: 'jwt',
  userId,
  organizationId,
  role: 'owner',
  isAdmin: false,
  apiKeyId: null,
  keyPrefix: null,
});

describe('billing', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({ DEFAULT_MONTHLY_CREDITS: '1000' });
  });
  afterAll(() => test.close());

  async function organizationOf(userId: string): Promise<string> {
    const { rows } = await test.db.query('SELECT organization_id FROM users WHERE id = $1', [userId]);
    return rows[0].organization_id;
  }

  it('gives a new organization the default monthly quota for the current UTC month', async () => {
    const user = await signUp(test);
    const response = await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200);
    expect(response.body).toEqual({
      plan: 'standard',
      current_quota: {
        credits_total: 1000,
        credits_used: 0,
        credits_remaining: 1000,
        period_start: monthStart(0),
        period_end: monthStart(1),
      },
    });
  });

  it("lets an admin change an organization's monthly credits, and nobody else", async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    const path = `/v1/billings/organizations/${organizationId}/subscription/`;
    await test.http().patch(path).set(user.auth).send({ monthly_credits: 5 }).expect(403, {
      detail: 'You do not have permission to perform this action.',
    });
    const admin = await signIn(test, ADMIN.email, ADMIN.password);
    await test.http().patch(path).set(admin.auth).send({ monthly_credits: -1 }).expect(400);
    await test
      .http()
      .patch(path)
      .set(admin.auth)
      .send({})
      .expect(400, {
        detail: 'monthly_credits: This field is required.',
        fields: { monthly_credits: ['This field is required.'] },
      });
    const changed = await test.http().patch(path).set(admin.auth).send({ monthly_credits: 5 }).expect(200);
    expect(changed.body.current_quota).toMatchObject({ credits_total: 5, credits_remaining: 5 });
    await test
      .http()
      .patch('/v1/billings/organizations/00000000-0000-4000-8000-000000000000/subscription/')
      .set(admin.auth)
      .send({ monthly_credits: 5 })
      .expect(404);
  });

  it('never spends past the quota under a burst of concurrent spends', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    await test.db.query('UPDATE subscriptions SET monthly_credits = 50 WHERE organization_id = $1', [organizationId]);
    const quota = test.app.get(QuotaService);
    const caller = jwtCaller(user.id, organizationId);
    const outcomes = await Promise.allSettled(Array.from({ length: 200 }, () => quota.spend(caller, 'query', null)));
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(outcomes.length - refused.length).toBe(50);
    expect(refused.every((outcome) => outcome.reason instanceof QuotaExhaustedError)).toBe(true);
    const stored = await test.db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [
      organizationId,
    ]);
    expect(stored.rows[0].credits_used).toBe(50);
    const ledger = await test.db.query('SELECT count(*)::int AS n FROM usage_events WHERE organization_id = $1', [
      organizationId,
    ]);
    expect(ledger.rows[0].n).toBe(50);
  });

  it('never spends past the quota when two instances spend for one organization at once', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    await test.db.query('UPDATE subscriptions SET monthly_credits = 50 WHERE organization_id = $1', [organizationId]);
    const other = await startTestApp({}, test.database);
    try {
      const caller = jwtCaller(user.id, organizationId);
      const outcomes = await Promise.allSettled(
        [test, other].flatMap((instance) =>
          Array.from({ length: 100 }, () => instance.app.get(QuotaService).spend(caller, 'query', null)),
        ),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(50);
      const remaining = outcomes
        .filter((outcome): outcome is PromiseFulfilledResult<Reservation> => outcome.status === 'fulfilled')
        .map((outcome) => outcome.value.creditsRemaining)
        .sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => i));
      const stored = await test.db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [
        organizationId,
      ]);
      expect(stored.rows[0].credits_used).toBe(50);
    } finally {
      await other.close();
    }
  });

  it('starts a full quota in a new calendar month', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    // Last month's period, fully spent.
    await test.db.query(
      `UPDATE subscriptions SET monthly_credits = 3, credits_used = 3,
              period_start = (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date
        WHERE organization_id = $1`,
      [organizationId],
    );
    const view = await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200);
    expect(view.body.current_quota).toMatchObject({
      credits_total: 3,
      credits_used: 0,
      credits_remaining: 3,
      period_start: monthStart(0),
    });
    const caller = jwtCaller(user.id, organizationId);
    const reservation = await test.app.get(QuotaService).spend(caller, 'query', null);
    expect(reservation.creditsRemaining).toBe(2);
    const stored = await test.db.query(
      'SELECT credits_used, period_start::text FROM subscriptions WHERE organization_id = $1',
      [organizationId],
    );
    expect(stored.rows[0]).toEqual({ credits_used: 1, period_start: monthStart(0).slice(0, 10) });
  });

  it('never writes an older period back over a newer one (a spend that began before midnight and got the row after)', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    // As if another instance's first spend of next month committed while this statement waited for the row.
    await test.db.query(
      `UPDATE subscriptions SET credits_used = 3,
              period_start = (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month')::date
        WHERE organization_id = $1`,
      [organizationId],
    );
    const caller = jwtCaller(user.id, organizationId);
    await test.app.get(QuotaService).spend(caller, 'query', null);
    const stored = await test.db.query(
      'SELECT credits_used, period_start::text FROM subscriptions WHERE organization_id = $1',
      [organizationId],
    );
    expect(stored.rows[0]).toEqual({ credits_used: 4, period_start: monthStart(1).slice(0, 10) });
  });

  it('refunds a reservation: credits come back and the ledger line goes', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    const caller = jwtCaller(user.id, organizationId);
    const quota = test.app.get(QuotaService);
    const reservation = await quota.spend(caller, 'query', null);
    await quota.refund(reservation);
    const view = await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200);
    expect(view.body.current_quota.credits_used).toBe(0);
    const usage = await test.http().get('/v1/billings/usage/').set(user.auth).expect(200);
    expect(usage.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('builds page links from the path alone: a garbled or foreign Host header changes nothing', async () => {
    const user = await signUp(test);
    const organizationId = await organizationOf(user.id);
    const caller = jwtCaller(user.id, organizationId);
    for (let i = 0; i < 3; i++) await test.app.get(QuotaService).spend(caller, 'query', null);
    for (const host of ['a b', 'exa[mple', 'evil.example']) {
      const response = await test
        .http()
        .get('/v1/billings/usage/?limit=1&offset=1')
        .set(user.auth)
        .set('Host', host)
        .expect(200);
      expect(response.body).toMatchObject({
        count: 3,
        next: '/v1/billings/usage/?limit=1&offset=2',
        previous: '/v1/billings/usage/?limit=1&offset=0',
      });
    }
  });

  it('validates pagination parameters', async () => {
    const user = await signUp(test);
    await test
      .http()
      .get('/v1/billings/usage/?limit=0')
      .set(user.auth)
      .expect(400, {
        detail: 'limit: Must be a whole number from 1 to 100.',
        fields: { limit: ['Must be a whole number from 1 to 100.'] },
      });
    await test.http().get('/v1/billings/usage/?offset=-3').set(user.auth).expect(400);
  });

  it('reports credits per day for the current period', async () => {
    const user = await signUp(test);
    const response = await test.http().get('/v1/billings/usage/daily/').set(user.auth).expect(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(response.body.at(-1)).toEqual({ date: today, credits: 0 });
    expect(response.body[0].date).toBe(monthStart(0).slice(0, 10));
  });
});
