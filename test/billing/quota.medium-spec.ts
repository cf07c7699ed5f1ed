import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { CURRENT_PERIOD_SQL } from '../../src/billing/billing-period.js';
import { QuotaService, type Reservation } from '../../src/billing/quota.service.js';
import { SubscriptionsRepository } from '../../src/billing/subscriptions.repository.js';
import { KeyCreditLimitExhaustedError, QuotaExhaustedError } from '../../src/common/errors.js';
import type { Principal } from '../../src/common/principal.js';
import { insertOrganization, type MediumDatabase, type Member, startMediumDatabase } from '../support/medium.js';

/**
 * The money, against the real PostgreSQL and nothing else: QuotaService and the one statement per
 * credit movement in SubscriptionsRepository (the organization's quota and the key-lineage cap), built
 * by hand on a migrated database. Two QuotaService instances stand for two instances of the service:
 * each groups its own concurrent spends, and only the database keeps them from over-spending together.
 */
describe('QuotaService on PostgreSQL (credits, the key-lineage cap)', () => {
  let medium: MediumDatabase;
  let db: DataSource;
  let quota: QuotaService;
  let otherInstance: QuotaService;

  beforeAll(async () => {
    medium = await startMediumDatabase({ QUERY_CREDIT_COST: '2', SEARCH_CREDIT_COST: '0' });
    db = medium.dataSource;
    quota = new QuotaService(new SubscriptionsRepository(db), medium.config);
    otherInstance = new QuotaService(new SubscriptionsRepository(db), medium.config);
  });
  afterAll(() => medium.close());

  /** An organization with a subscription of `monthlyCredits`, and its owner signed in with a JWT. */
  async function organizationWith(monthlyCredits: number): Promise<Member & { caller: Principal }> {
    const member = await insertOrganization(db);
    await quota.open(db.manager, member.organizationId);
    await db.query('UPDATE subscriptions SET monthly_credits = $2 WHERE organization_id = $1', [
      member.organizationId,
      monthlyCredits,
    ]);
    return { ...member, caller: jwtCaller(member) };
  }

  const jwtCaller = ({ userId, organizationId }: Member): Principal => ({
    kind: 'jwt',
    userId,
    organizationId,
    role: 'owner',
    isAdmin: false,
    apiKeyId: null,
    keyPrefix: null,
  });

  /** An API key of the member; `rotatedFrom` makes it the successor in that key's lineage. */
  async function apiKey(
    member: Member,
    monthlyCreditLimit: number | null,
    rotatedFrom?: Principal,
  ): Promise<Principal> {
    const id = randomUUID();
    const keyPrefix = `svc_${randomBytes(4).toString('hex')}`;
    const lineage = rotatedFrom
      ? ((await db.query('SELECT lineage_id FROM api_keys WHERE id = $1', [rotatedFrom.apiKeyId]))[0]
          .lineage_id as string)
      : id;
    await db.query(
      `INSERT INTO api_keys (id, user_id, organization_id, name, key_prefix, key_hash, monthly_credit_limit, lineage_id, rotated_from_id)
       VALUES ($1, $2, $3, 'medium', $4, $5, $6, $7, $8)`,
      [
        id,
        member.userId,
        member.organizationId,
        keyPrefix,
        randomBytes(32).toString('hex'),
        monthlyCreditLimit,
        lineage,
        rotatedFrom?.apiKeyId ?? null,
      ],
    );
    if (!rotatedFrom)
      await db.query(`INSERT INTO api_key_credits (api_key_id, period_start) VALUES ($1, ${CURRENT_PERIOD_SQL})`, [id]);
    return { ...jwtCaller(member), kind: 'api_key', apiKeyId: id, keyPrefix };
  }

  const used = async (organizationId: string) =>
    (await db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [organizationId]))[0]
      .credits_used as number;
  const ledger = async (organizationId: string) =>
    (
      await db.query(
        'SELECT count(*)::int AS lines, coalesce(sum(credits), 0)::int AS credits FROM usage_events WHERE organization_id = $1',
        [organizationId],
      )
    )[0] as { lines: number; credits: number };
  const keyCounter = async (key: Principal) =>
    (
      await db.query(
        'SELECT c.credits_used FROM api_key_credits c JOIN api_keys k ON c.api_key_id = k.lineage_id WHERE k.id = $1',
        [key.apiKeyId],
      )
    )[0].credits_used as number;

  /** Every spend's outcome: the reservation, or the error's class name. */
  const settled = (spends: Promise<Reservation>[]) =>
    Promise.allSettled(spends).then((results) =>
      results.map((result) =>
        result.status === 'fulfilled' ? result.value : (result.reason as Error).constructor.name,
      ),
    );

  it('spends the operation price, writes one ledger line per spend and says what is left after each', async () => {
    const { organizationId, caller } = await organizationWith(7);
    const first = await quota.spend(caller, 'query', 'medicine');
    const second = await quota.spend(caller, 'query', null);
    expect([first.credits, first.creditsRemaining, second.creditsRemaining]).toEqual([2, 5, 3]);
    expect(await used(organizationId)).toBe(4);
    expect(await ledger(organizationId)).toEqual({ lines: 2, credits: 4 });
    const lines = await db.query(
      'SELECT id, user_id, api_key_id, operation, domain, credits FROM usage_events WHERE organization_id = $1 ORDER BY domain NULLS LAST',
      [organizationId],
    );
    expect(lines).toEqual([
      {
        id: first.eventId,
        user_id: caller.userId,
        api_key_id: null,
        operation: 'query',
        domain: 'medicine',
        credits: 2,
      },
      { id: second.eventId, user_id: caller.userId, api_key_id: null, operation: 'query', domain: null, credits: 2 },
    ]);
    // A free operation (SEARCH_CREDIT_COST 0) is logged at 0 and never refused.
    expect((await quota.spend(caller, 'search', null)).credits).toBe(0);
    expect(await used(organizationId)).toBe(4);
  });

  it('refuses the spend that does not fit whole, with the figures of the quota, and charges nothing for it', async () => {
    const { organizationId, caller } = await organizationWith(5);
    await quota.spend(caller, 'query', null);
    await quota.spend(caller, 'query', null);
    const refusal = await quota.spend(caller, 'query', null).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(QuotaExhaustedError);
    expect((refusal as QuotaExhaustedError).body()).toMatchObject({
      code: 'quota_exhausted',
      credits_total: 5,
      credits_used: 4,
    });
    expect(await used(organizationId)).toBe(4);
    expect(await ledger(organizationId)).toEqual({ lines: 2, credits: 4 });
  });

  it('never over-spends under 40 concurrent spends from two instances: exactly the quota is granted', async () => {
    const { organizationId, caller } = await organizationWith(30);
    const outcomes = await settled(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? quota : otherInstance).spend(caller, 'query', null)),
    );
    const granted = outcomes.filter((outcome): outcome is Reservation => typeof outcome === 'object');
    expect(granted).toHaveLength(15);
    expect(outcomes.filter((outcome) => outcome === 'QuotaExhaustedError')).toHaveLength(25);
    expect(await used(organizationId)).toBe(30);
    expect(await ledger(organizationId)).toEqual({ lines: 15, credits: 30 });
    // Each grant saw its own balance, as if they had gone one by one.
    expect(granted.map((reservation) => reservation.creditsRemaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 15 }, (_, i) => i * 2),
    );
  });

  it('gives a refund back whole, and a partial refund all but what is kept, to the organization and the key', async () => {
    const member = await organizationWith(10);
    const key = await apiKey(member, 6);
    const refunded = await quota.spend(key, 'query', null);
    const shrunk = await quota.spend(key, 'query', null);
    expect([await used(member.organizationId), await keyCounter(key)]).toEqual([4, 4]);
    await quota.refund(refunded);
    await quota.refundAllBut(shrunk, 1);
    expect([await used(member.organizationId), await keyCounter(key)]).toEqual([1, 1]);
    expect(await ledger(member.organizationId)).toEqual({ lines: 1, credits: 1 });
  });

  describe("the key-lineage cap (api_key_credits, spent in the quota's statement)", () => {
    it("refuses a key past its monthly_credit_limit with the key's figures, while the organization has credits left", async () => {
      const member = await organizationWith(100);
      const key = await apiKey(member, 4);
      await quota.spend(key, 'query', null);
      await quota.spend(key, 'query', null);
      const refusal = await quota.spend(key, 'query', null).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(KeyCreditLimitExhaustedError);
      expect((refusal as KeyCreditLimitExhaustedError).body()).toMatchObject({
        code: 'key_credit_limit_exhausted',
        credits_total: 4,
        credits_used: 4,
      });
      // The owner's JWT still spends from the organization's quota.
      await quota.spend(member.caller, 'query', null);
      expect([await used(member.organizationId), await keyCounter(key)]).toEqual([6, 4]);
    });

    it('is exact under 30 concurrent spends shared by a key and its successor on two instances', async () => {
      const member = await organizationWith(1000);
      const old = await apiKey(member, null);
      const successor = await apiKey(member, 10, old);
      const outcomes = await settled(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? quota : otherInstance).spend(i % 3 ? old : successor, 'query', null),
        ),
      );
      expect(outcomes.filter((outcome) => typeof outcome === 'object')).toHaveLength(5);
      expect(outcomes.filter((outcome) => outcome === 'KeyCreditLimitExhaustedError')).toHaveLength(25);
      // One counter for the lineage, capped by its newest key's limit.
      expect([await keyCounter(old), await keyCounter(successor)]).toEqual([10, 10]);
      expect(await used(member.organizationId)).toBe(10);
      expect(await ledger(member.organizationId)).toEqual({ lines: 5, credits: 10 });
    });

    it('keeps apart the caps of keys of different lineages', async () => {
      const member = await organizationWith(1000);
      const first = await apiKey(member, 2);
      const second = await apiKey(member, 2);
      await quota.spend(first, 'query', null);
      await quota.spend(second, 'query', null);
      expect([await keyCounter(first), await keyCounter(second)]).toEqual([2, 2]);
      await expect(quota.spend(first, 'query', null)).rejects.toBeInstanceOf(KeyCreditLimitExhaustedError);
    });

    it("starts a key's count again in a new month, as the organization's", async () => {
      const member = await organizationWith(4);
      const key = await apiKey(member, 2);
      await quota.spend(key, 'query', null);
      await expect(quota.spend(key, 'query', null)).rejects.toBeInstanceOf(KeyCreditLimitExhaustedError);
      const lastMonth = `(${CURRENT_PERIOD_SQL} - interval '1 month')::date`;
      await db.query(`UPDATE api_key_credits SET period_start = ${lastMonth} WHERE api_key_id = $1`, [key.apiKeyId]);
      await db.query(`UPDATE subscriptions SET period_start = ${lastMonth} WHERE organization_id = $1`, [
        member.organizationId,
      ]);
      const reservation = await quota.spend(key, 'query', null);
      expect(reservation.creditsRemaining).toBe(2);
      expect([await used(member.organizationId), await keyCounter(key)]).toEqual([2, 2]);
    });
  });
});
