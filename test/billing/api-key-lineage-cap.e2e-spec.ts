import { DataSource } from 'typeorm';
import { KeyLineages1795723595478 } from '../../src/database/migrations/1795723595478-KeyLineages.js';
import { signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { bearer, KEYS, partnerKey, type PartnerKey, startWithAliceAndBob } from '../support/api-keys.js';

/**
 * A key and the keys that replaced it by rotation are one lineage, with one monthly credit cap: an old
 * key in its grace period and its successor spend from the same counter (issue 19, item 6: cap 3 let
 * the two spend 5, and every rotation added a cap).
 */
describe('monthly credit limit across rotations (one cap per key lineage)', () => {
  let test: TestApp;

  beforeAll(async () => {
    ({ test } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  const ask = (key: string, i: number) =>
    test
      .http()
      .post('/v1/query/')
      .set(bearer(key))
      .send({ query: `question ${i}` });

  async function rotate(user: SignedInUser, keyId: string): Promise<PartnerKey> {
    const response = await test
      .http()
      .post(`${KEYS}${keyId}/rotate/`)
      .set(user.auth)
      .send({ grace_period_seconds: 3600 })
      .expect(201);
    return response.body as PartnerKey;
  }

  const listed = async (user: SignedInUser) =>
    new Map(
      ((await test.http().get(KEYS).set(user.auth).expect(200)).body as PartnerKey[]).map((key) => [
        key.id,
        key.credits_used_this_period,
      ]),
    );

  const ledger = async (keyIds: string[]) =>
    (
      await test.db.query('SELECT coalesce(sum(credits), 0)::int AS n FROM usage_events WHERE api_key_id = ANY($1)', [
        keyIds,
      ])
    ).rows[0].n as number;

  it('lets the old key (in its grace period) and the new one spend 3 together with a cap of 3, not 5', async () => {
    const user = await signUp(test);
    const old = await partnerKey(test, user, { monthly_credit_limit: 3 });
    await ask(old.key, 0).expect(200);
    const successor = await rotate(user, old.id);
    expect(successor.credits_used_this_period).toBe(1);
    const statuses: number[] = [];
    for (const [i, key] of [old.key, successor.key, old.key, successor.key].entries())
      statuses.push((await ask(key, i + 1)).status);
    expect(statuses).toEqual([200, 200, 402, 402]);
    const refusal = await ask(old.key, 9).expect(402);
    expect(refusal.body).toMatchObject({ code: 'key_credit_limit_exhausted', credits_total: 3, credits_used: 3 });
    expect(await listed(user)).toEqual(
      new Map([
        [successor.id, 3],
        [old.id, 3],
      ]),
    );
    expect(await ledger([old.id, successor.id])).toBe(3);
  });

  it('does not multiply the cap with repeated rotations: four keys of one lineage spend 4 with a cap of 4', async () => {
    const user = await signUp(test);
    const keys = [await partnerKey(test, user, { monthly_credit_limit: 4 })];
    for (let i = 0; i < 3; i++) keys.push(await rotate(user, keys[keys.length - 1].id));
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++)
      for (const key of keys) statuses.push((await ask(key.key, statuses.length)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 402)).toBe(true);
    expect(await ledger(keys.map((key) => key.id))).toBe(4);
  });

  it('is exact under 30 concurrent requests shared by the old and the new key', async () => {
    const user = await signUp(test);
    const old = await partnerKey(test, user, { monthly_credit_limit: 10 });
    const successor = await rotate(user, old.id);
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => ask(i % 2 === 0 ? old.key : successor.key, i).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 402)).toBe(true);
    expect(await ledger([old.id, successor.id])).toBe(10);
    const { rows } = await test.db.query('SELECT credits_used FROM api_key_credits WHERE api_key_id = ANY($1)', [
      [old.id, successor.id],
    ]);
    expect(rows).toEqual([{ credits_used: 10 }]); // one counter, the lineage's
  });

  it("applies the newest key's cap to the whole lineage when it is changed after the rotation", async () => {
    const user = await signUp(test);
    const old = await partnerKey(test, user, { monthly_credit_limit: 5 });
    const successor = await rotate(user, old.id);
    await test
      .http()
      .patch(`${KEYS}${successor.id}/update/`)
      .set(user.auth)
      .send({ monthly_credit_limit: 1 })
      .expect(200);
    await ask(old.key, 0).expect(200);
    const refusal = await ask(old.key, 1).expect(402);
    expect(refusal.body).toMatchObject({ credits_total: 1, credits_used: 1 });
    await ask(successor.key, 2).expect(402);
  });

  it('keeps separate caps for keys that are not of one lineage', async () => {
    const user = await signUp(test);
    const first = await partnerKey(test, user, { monthly_credit_limit: 1 });
    const second = await partnerKey(test, user, { monthly_credit_limit: 1 });
    await ask(first.key, 0).expect(200);
    await ask(second.key, 1).expect(200);
    await ask(first.key, 2).expect(402);
  });

  it('merges the counters of keys rotated before lineages existed: one counter per chain, with what the chain spent', async () => {
    const user = await signUp(test);
    const old = await partnerKey(test, user, { monthly_credit_limit: 10 });
    await ask(old.key, 0).expect(200);
    const successor = await rotate(user, old.id);
    await ask(old.key, 1).expect(200);
    await ask(successor.key, 2).expect(200);
    const migration = new KeyLineages1795723595478();
    const runner = test.app.get(DataSource).createQueryRunner();
    try {
      // As before the migration: a counter per key, the successor's started from its predecessor's (1)
      // and each went on alone: 2 and 2, while the chain spent 3.
      await migration.down(runner);
      await test.db.query('UPDATE api_key_credits SET credits_used = 2 WHERE api_key_id = ANY($1)', [
        [old.id, successor.id],
      ]);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const { rows } = await test.db.query(
      'SELECT api_key_id, credits_used FROM api_key_credits WHERE api_key_id = ANY($1)',
      [[old.id, successor.id]],
    );
    expect(rows).toEqual([{ api_key_id: old.id, credits_used: 3 }]);
    const lineages = await test.db.query('SELECT DISTINCT lineage_id FROM api_keys WHERE id = ANY($1)', [
      [old.id, successor.id],
    ]);
    expect(lineages.rows).toEqual([{ lineage_id: old.id }]);
    expect(await listed(user)).toEqual(
      new Map([
        [successor.id, 3],
        [old.id, 3],
      ]),
    );
  });
});
