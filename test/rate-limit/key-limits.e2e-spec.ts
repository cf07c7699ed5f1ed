import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { bearer, KEYS } from '../support/api-keys.js';
import { freshMinute } from '../support/core.js';

const ME = '/auth/users/me/';
const THROTTLED = /^Request was throttled\. Expected available in (\d+) seconds\.$/;

const rateLimitOf = (response: { headers: Record<string, string> }) => ({
  limit: response.headers['ratelimit-limit'],
  remaining: response.headers['ratelimit-remaining'],
  policy: response.headers['ratelimit-policy'],
});

describe("a key's rate_limit_per_minute under the operator's ceiling (KEY_RATE_LIMIT_MAX_PER_MINUTE)", () => {
  let test: TestApp;
  let user: SignedInUser;
  const ceilingRefusal = {
    detail:
      "rate_limit_per_minute: Ensure this value is less than or equal to 6000 (this service's ceiling, KEY_RATE_LIMIT_MAX_PER_MINUTE).",
    fields: {
      rate_limit_per_minute: [
        "Ensure this value is less than or equal to 6000 (this service's ceiling, KEY_RATE_LIMIT_MAX_PER_MINUTE).",
      ],
    },
  };

  beforeAll(async () => {
    test = await startTestApp(); // the default ceiling, 6000
    user = await signUp(test);
  });
  afterAll(() => test.close());

  it('refuses a create above the ceiling with a 400 naming the field and the ceiling, and stores nothing', async () => {
    const before = (await test.db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n as number;
    for (const value of [6001, 1_000_000])
      await test
        .http()
        .post(KEYS)
        .set(user.auth)
        .send({ name: 'greedy', rate_limit_per_minute: value })
        .expect(400, ceilingRefusal);
    expect((await test.db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(before);
    const created = await test
      .http()
      .post(KEYS)
      .set(user.auth)
      .send({ name: 'at the ceiling', rate_limit_per_minute: 6000 })
      .expect(201);
    expect(created.body.rate_limit_per_minute).toBe(6000);
  });

  it('refuses an update above the ceiling and leaves the key as it was', async () => {
    const key = await createKey(test, user, 'modest');
    await test
      .http()
      .patch(`${KEYS}${key.id}/update/`)
      .set(user.auth)
      .send({ rate_limit_per_minute: 1_000_000 })
      .expect(400, ceilingRefusal);
    const { rows } = await test.db.query('SELECT rate_limit_per_minute FROM api_keys WHERE id = $1', [key.id]);
    expect(rows).toEqual([{ rate_limit_per_minute: null }]);
    const events = await test.db.query(`SELECT action FROM api_key_events WHERE key_id = $1`, [key.id]);
    expect(events.rows).toEqual([{ action: 'created' }]);
  });

  it('holds a key stored with more (before the ceiling existed) to the ceiling', async () => {
    const key = await createKey(test, user, 'from before');
    await test.db.query('UPDATE api_keys SET rate_limit_per_minute = 1000000 WHERE id = $1', [key.id]);
    const response = await test.http().get(ME).set(bearer(key.key)).expect(200);
    expect(rateLimitOf(response)).toEqual({ limit: '6000', remaining: '5999', policy: '6000;w=60' });
  });
});

describe('active API keys per organization (MAX_ACTIVE_KEYS_PER_ORG)', () => {
  let test: TestApp;
  const tooMany = {
    detail:
      'This organization already has 5 active API keys, the most it may have (MAX_ACTIVE_KEYS_PER_ORG); revoke one before creating another.',
  };
  const activeKeys = async (user: SignedInUser) =>
    (
      await test.db.query(
        `SELECT count(*)::int AS n FROM api_keys k JOIN users u ON u.organization_id = k.organization_id
          WHERE u.id = $1 AND k.is_active AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
        [user.id],
      )
    ).rows[0].n as number;

  beforeAll(async () => {
    test = await startTestApp({ MAX_ACTIVE_KEYS_PER_ORG: '5' });
  });
  afterAll(() => test.close());

  it('is exact under 30 concurrent creates at the edge: 2 of them fill the organization to 5, 28 get the 400', async () => {
    const user = await signUp(test);
    for (let i = 0; i < 3; i++) await createKey(test, user, `existing ${i}`);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        test
          .http()
          .post(KEYS)
          .set(user.auth)
          .send({ name: `burst ${i}` }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(2);
    expect(statuses.filter((status) => status === 400)).toHaveLength(28);
    for (const refused of responses.filter((response) => response.status === 400))
      expect(refused.body).toEqual(tooMany);
    expect(await activeKeys(user)).toBe(5);
  });

  it('never blocks a rotation at the cap (the replaced key, even in its grace period, is no longer active)', async () => {
    const user = await signUp(test);
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push(await createKey(test, user, `key ${i}`));
    await test.http().post(KEYS).set(user.auth).send({ name: 'one too many' }).expect(400, tooMany);
    const rotated = await test
      .http()
      .post(`${KEYS}${keys[0].id}/rotate/`)
      .set(user.auth)
      .send({ grace_period_seconds: 3600 })
      .expect(201);
    // Both the old key (grace) and the new one work; the organization still counts 5 active keys.
    await test.http().get(ME).set(bearer(keys[0].key)).expect(200);
    await test
      .http()
      .get(ME)
      .set(bearer(rotated.body.key as string))
      .expect(200);
    expect(await activeKeys(user)).toBe(5);
    await test.http().post(KEYS).set(user.auth).send({ name: 'still too many' }).expect(400, tooMany);
  });

  it('frees a place when a key is revoked or expires', async () => {
    const user = await signUp(test);
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push(await createKey(test, user, `key ${i}`));
    await test.http().post(`${KEYS}${keys[1].id}/revoke/`).set(user.auth).expect(200);
    await test.http().post(KEYS).set(user.auth).send({ name: 'in the revoked one’s place' }).expect(201);
    await test.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [keys[2].id]);
    await test.http().post(KEYS).set(user.auth).send({ name: 'in the expired one’s place' }).expect(201);
    await test.http().post(KEYS).set(user.auth).send({ name: 'one too many' }).expect(400, tooMany);
  });

  it('counts per organization: another organization creates its own keys', async () => {
    const other = await signUp(test);
    await createKey(test, other, 'mine');
    expect(await activeKeys(other)).toBe(1);
  });
});

describe('requests per minute of one organization (ORG_RATE_LIMIT_PER_MINUTE)', () => {
  let test: TestApp;

  beforeAll(async () => {
    test = await startTestApp({ ORG_RATE_LIMIT_PER_MINUTE: '9', RATE_LIMIT_PER_MINUTE: '4' });
  });
  afterAll(() => test.close());

  it('spans all the keys and users of the organization; the headers show whichever bucket is tighter', async () => {
    const owner = await signUp(test);
    const stranger = await signUp(test);
    await freshMinute();
    // Two key creations: 2 of the organization's 9, 2 of the owner's 4.
    const first = await createKey(test, owner, 'first');
    const second = await createKey(test, owner, 'second');

    // The first key's own bucket (4) is the tighter one: 4 left of it, 7 of the organization's.
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(rateLimitOf(await test.http().get(ME).set(bearer(first.key)).expect(200)));
    expect(seen.map(({ limit, remaining }) => [limit, remaining])).toEqual([
      ['4', '3'],
      ['4', '2'],
      ['4', '1'],
      ['4', '0'],
    ]);
    const ownLimit = await test.http().get(ME).set(bearer(first.key)).expect(429);
    expect(rateLimitOf(ownLimit)).toEqual({ limit: '4', remaining: '0', policy: '4;w=60' });

    // 6 of the organization's 9 are spent: for the second key the organization is the tighter bucket.
    const nearly = await test.http().get(ME).set(bearer(second.key)).expect(200);
    expect(rateLimitOf(nearly)).toEqual({ limit: '9', remaining: '2', policy: '9;w=60' });
    await test.http().get(ME).set(bearer(second.key)).expect(200);
    const last = await test.http().get(ME).set(bearer(second.key)).expect(200);
    expect(rateLimitOf(last)).toEqual({ limit: '9', remaining: '0', policy: '9;w=60' });

    // Spent: every key and every user of the organization gets the 429, with the organization's figures.
    for (const auth of [bearer(second.key), owner.auth]) {
      const refused = await test.http().get(ME).set(auth).expect(429);
      const seconds = Number(THROTTLED.exec(refused.body.detail as string)?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
      expect(refused.headers['retry-after']).toBe(String(seconds));
      expect(rateLimitOf(refused)).toEqual({ limit: '9', remaining: '0', policy: '9;w=60' });
    }
    // Another organization has its own budget.
    const elsewhere = await test.http().get(ME).set(stranger.auth).expect(200);
    expect(rateLimitOf(elsewhere)).toEqual({ limit: '4', remaining: '3', policy: '4;w=60' });
  });
});
