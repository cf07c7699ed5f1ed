import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { VerifiedKeyCache } from '../../src/api-keys/verified-key-cache.js';
import { ApiKeyStrategy } from '../../src/auth/strategies/api-key.strategy.js';
import { JwtAccessStrategy } from '../../src/auth/strategies/jwt-access.strategy.js';
import { CounterStore } from '../../src/rate-limit/counter-store.js';
import { MAX_FAILURES_PER_EMAIL } from '../../src/rate-limit/sign-in-throttle.js';
import { createKey, signUp, startTestApp, type TestApp } from '../support/app.js';
import { API_KEY_MESSAGE, BAD_CREDENTIALS, contractChecksum, JWT_INVALID } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const THROTTLED = /^Request was throttled\. Expected available in (\d+) seconds\.$/;
const ME = '/auth/users/me/';
const PASSWORD = 'correct horse battery';

function expectThrottled(
  response: { status: number; body: { detail?: string }; headers: Record<string, string> },
  maxSeconds: number,
) {
  expect(response.status).toBe(429);
  const seconds = Number(THROTTLED.exec(response.body.detail ?? '')?.[1]);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(maxSeconds);
  expect(response.headers['retry-after']).toBe(String(seconds));
}

/** A key of the right shape with a correct checksum that was never issued: what an attacker can forge. */
function forgedKey(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const random = Array.from(randomBytes(32), (byte) => alphabet[byte % 62]).join('');
  return `svc_${random}${contractChecksum(random)}`;
}

/** Counts the key lookups the service sends to the database (a pass-through spy: the database is real). */
function countKeyLookups(test: TestApp): { count: () => number; restore: () => void } {
  const dataSource = test.app.get(DataSource);
  const spy = jest.spyOn(dataSource, 'query');
  return {
    count: () => spy.mock.calls.filter(([sql]) => sql.includes('WHERE k.key_hash = $1')).length,
    restore: () => spy.mockRestore(),
  };
}

function counts(statuses: number[]): Record<number, number> {
  return statuses.reduce<Record<number, number>>((all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }), {});
}

describe('sign-in attempts under concurrency', () => {
  const guesses = (test: TestApp, email: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        test
          .http()
          .post('/auth/jwt/create/')
          .send({ email, password: `wrong guess ${i}` }),
      ),
    );

  describe('in memory', () => {
    let test: TestApp;
    beforeAll(async () => {
      test = await startTestApp({ PASSWORD_HASH_CONCURRENCY: '2' });
    });
    afterAll(() => test.close());

    it(`evaluates at most ${MAX_FAILURES_PER_EMAIL} of 40 simultaneous wrong guesses for one e-mail; the rest get 429`, async () => {
      const victim = await signUp(test);
      const responses = await guesses(test, victim.email, 40);
      expect(counts(responses.map((response) => response.status))).toEqual({
        401: MAX_FAILURES_PER_EMAIL,
        429: 40 - MAX_FAILURES_PER_EMAIL,
      });
      for (const response of responses) {
        if (response.status === 401) expect(response.body).toEqual(BAD_CREDENTIALS);
        else expectThrottled(response, 15 * 60);
      }
      // The right password is refused too until the window passes; issued tokens keep working.
      expectThrottled(
        await test.http().post('/auth/jwt/create/').send({ email: victim.email, password: PASSWORD }),
        15 * 60,
      );
      await test.http().get(ME).set(victim.auth).expect(200);
    });

    it('gives back the reservation of a successful sign-in: successes never count toward the limit', async () => {
      const user = await signUp(test);
      const responses = await Promise.all(
        Array.from({ length: MAX_FAILURES_PER_EMAIL + 5 }, () =>
          test.http().post('/auth/jwt/create/').send({ email: user.email, password: PASSWORD }),
        ),
      );
      // Simultaneous right answers may briefly hold every slot, but never fail as wrong guesses.
      expect(responses.every((response) => response.status === 200 || response.status === 429)).toBe(true);
      await test.http().post('/auth/jwt/create/').send({ email: user.email, password: PASSWORD }).expect(200);
    });
  });

  describe('in Redis, across two instances', () => {
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    let redis: Redis;
    const prefix = `kqs-test-${randomBytes(4).toString('hex')}:`;
    beforeAll(async () => {
      database = await createTestDatabase();
      const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
      [a, b] = await Promise.all([startTestApp(env, database), startTestApp(env, database)]);
      redis = new Redis(REDIS_URL);
    });
    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    it(`evaluates at most ${MAX_FAILURES_PER_EMAIL} of 40 simultaneous wrong guesses split over both instances`, async () => {
      const victim = await signUp(a);
      const [fromA, fromB] = await Promise.all([guesses(a, victim.email, 20), guesses(b, victim.email, 20)]);
      const statuses = [...fromA, ...fromB].map((response) => response.status);
      expect(counts(statuses)).toEqual({ 401: MAX_FAILURES_PER_EMAIL, 429: 40 - MAX_FAILURES_PER_EMAIL });
      const [key] = await redis.keys(`${prefix}signin:email:*`);
      expect(Number(await redis.get(key))).toBe(MAX_FAILURES_PER_EMAIL);
      expect(await redis.pttl(key)).toBeGreaterThan(14 * 60_000);
    });
  });
});

describe('limits per client address before authentication', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({
      TRUST_PROXY: 'loopback',
      SIGNUP_LIMIT_PER_HOUR: '3',
      SIGNIN_LIMIT_PER_MINUTE: '4',
      TOKEN_LIMIT_PER_MINUTE: '5',
      FAILED_AUTH_LIMIT_PER_MINUTE: '6',
    });
  });
  afterAll(() => test.close());

  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const signUpFrom = (address: string, email = `limited-${randomBytes(6).toString('hex')}@example.com`) =>
    test.http().post('/auth/users/').set(from(address)).send({ email, password: PASSWORD });

  it('stops sign-ups from one address past SIGNUP_LIMIT_PER_HOUR, counting refused bodies too, and not other addresses', async () => {
    const before = (await test.db.query('SELECT count(*)::int AS n FROM users')).rows[0].n as number;
    await signUpFrom('198.51.100.1').expect(201);
    await test
      .http()
      .post('/auth/users/')
      .set(from('198.51.100.1'))
      .send({ email: 'no password@example.com' })
      .expect(400);
    await signUpFrom('198.51.100.1').expect(201);
    const refused = await signUpFrom('198.51.100.1');
    expectThrottled(refused, 3600);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    await signUpFrom('198.51.100.2').expect(201);
    expect((await test.db.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(before + 3);
  });

  it('stops sign-in attempts from one address past SIGNIN_LIMIT_PER_MINUTE, right or wrong', async () => {
    const email = `signin-${randomBytes(6).toString('hex')}@example.com`;
    await signUpFrom('198.51.100.10', email).expect(201);
    const statuses: number[] = [];
    for (const password of [PASSWORD, 'wrong password', PASSWORD, 'wrong password', PASSWORD]) {
      statuses.push(
        (await test.http().post('/auth/jwt/create/').set(from('198.51.100.11')).send({ email, password })).status,
      );
    }
    expect(statuses).toEqual([200, 401, 200, 401, 429]);
    await test
      .http()
      .post('/auth/jwt/create/')
      .set(from('198.51.100.12'))
      .send({ email, password: PASSWORD })
      .expect(200);
  });

  it('stops refresh, verify and logout calls from one address past TOKEN_LIMIT_PER_MINUTE (one budget for the three)', async () => {
    const email = `token-${randomBytes(6).toString('hex')}@example.com`;
    await signUpFrom('198.51.100.20', email).expect(201);
    const { refresh } = (
      await test
        .http()
        .post('/auth/jwt/create/')
        .set(from('198.51.100.20'))
        .send({ email, password: PASSWORD })
        .expect(200)
    ).body;
    const address = from('198.51.100.21');
    await test.http().post('/auth/jwt/refresh/').set(address).send({ refresh }).expect(200);
    await test.http().post('/auth/jwt/verify/').set(address).send({ token: refresh }).expect(200);
    await test.http().post('/auth/jwt/verify/').set(address).send({ token: 'forged' }).expect(401);
    await test.http().post('/auth/jwt/refresh/').set(address).send({ refresh: 'forged' }).expect(401);
    await test.http().post('/auth/jwt/refresh/').set(address).send({ refresh }).expect(200);
    expectThrottled(await test.http().post('/auth/jwt/refresh/').set(address).send({ refresh }), 60);
    expectThrottled(await test.http().post('/auth/jwt/logout/').set(address).send({ refresh }), 60);
    await test.http().post('/auth/jwt/refresh/').set(from('198.51.100.22')).send({ refresh }).expect(200);
  });

  it('refuses an address after FAILED_AUTH_LIMIT_PER_MINUTE invalid keys and tokens, before any lookup, and not others', async () => {
    const owner = await signUp(test);
    const { key } = await createKey(test, owner);
    const unused = (await createKey(test, owner, 'never used yet')).key;
    // Verified (from anywhere) until known to this instance: a lookup that a key change's notification
    // overtakes is not cached (VerifiedKeyCache's generation), and the two creations above notify; in
    // CI, under load, theirs arrived during the first lookup.
    const keys = test.app.get(ApiKeyStrategy);
    const tokens = test.app.get(JwtAccessStrategy);
    const token = owner.auth.Authorization.slice('Bearer '.length);
    for (let tries = 0; !(keys.isKnown(key) && tokens.isKnown(token)); tries++) {
      expect(tries).toBeLessThan(20);
      await test.http().get(ME).set(from('203.0.113.65')).set('X-API-Key', key).expect(200);
      await test.http().get(ME).set(from('203.0.113.65')).set(owner.auth).expect(200);
    }
    const attacker = from('203.0.113.66');
    const lookups = countKeyLookups(test);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await test.http().get(ME).set(attacker).set('X-API-Key', forgedKey())).status);
      for (let i = 0; i < 2; i++)
        statuses.push((await test.http().get(ME).set(attacker).set('Authorization', 'Bearer not.a.jwt')).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
      for (let i = 0; i < 5; i++)
        expectThrottled(await test.http().get(ME).set(attacker).set('X-API-Key', forgedKey()), 60);
      expectThrottled(await test.http().get(ME).set(attacker).set('Authorization', 'Bearer not.a.jwt'), 60);
      expect(lookups.count()).toBe(4);
      // From that address, a credential not verified before waits too; one verified recently does not
      // (others behind the same NAT keep working).
      expectThrottled(await test.http().get(ME).set(attacker).set('X-API-Key', unused), 60);
      await test.http().get(ME).set(attacker).set('X-API-Key', key).expect(200);
      await test.http().get(ME).set(attacker).set(owner.auth).expect(200);
      expect(lookups.count()).toBe(4);
      // Other addresses are served as usual.
      await test.http().get(ME).set(from('203.0.113.67')).set('X-API-Key', unused).expect(200);
      // No credential at all is not a failed one.
      await test.http().get(ME).set(from('203.0.113.68')).expect(401);
    } finally {
      lookups.restore();
    }
  });
  it("refuses a blocked address before reading its body, in the route's error dialect, and only where a credential is checked", async () => {
    const attacker = from('203.0.113.70');
    for (let i = 0; i < 6; i++) await test.http().get(ME).set(attacker).set('X-API-Key', forgedKey()).expect(401);
    expectThrottled(await test.http().get(ME).set(attacker).set('X-API-Key', forgedKey()), 60);
    // Refused before the body is read: a malformed one would otherwise be the 400.
    const unread = await test
      .http()
      .post('/v1/query/')
      .set(attacker)
      .set('X-API-Key', forgedKey())
      .set('Content-Type', 'application/json')
      .send('{"query": ');
    expectThrottled(unread, 60);
    // The OpenAI-compatible routes answer their clients' error shape, early or not.
    const openAi = await test
      .http()
      .post('/v1/chat/completions')
      .set(attacker)
      .set('Authorization', `Bearer ${forgedKey()}`)
      .send({ model: 'kqs-default', messages: [{ role: 'user', content: 'hi' }] });
    expectThrottled(openAi, 60);
    expect(openAi.body.error).toEqual({
      message: openAi.body.detail,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      param: null,
    });
    // The 401s the auth guard gives before the count stay first: an API key where only a JWT is accepted.
    const keyOnJwtRoute = await test.http().get('/v1/billings/api-keys/').set(attacker).set('X-API-Key', forgedKey());
    expect(keyOnJwtRoute.status).toBe(401);
    expect(keyOnJwtRoute.body).toEqual({ detail: 'This endpoint accepts only a JWT access token, not an API key.' });
    // A public route does not look at credentials, so a forged one there is no reason to refuse.
    await test.http().get('/health/').set(attacker).set('X-API-Key', forgedKey()).expect(200);
  });

  it('refuses an address past its sign-in limit before reading its body', async () => {
    const address = from('198.51.100.30');
    for (let i = 0; i < 4; i++)
      await test
        .http()
        .post('/auth/jwt/create/')
        .set(address)
        .send({ email: 'nobody@example.com', password: 'wrong password' })
        .expect(401);
    const malformed = () =>
      test.http().post('/auth/jwt/create/').set(address).set('Content-Type', 'application/json').send('{"email": ');
    // The first refusal is the store's, once the body was read and found valid (the guard runs after the parser)...
    expectThrottled(
      await test.http().post('/auth/jwt/create/').set(address).send({ email: 'nobody@example.com', password: 'x' }),
      60,
    );
    // ...and from then on this instance refuses from memory, before the body: the 429, not a 400.
    expectThrottled(await malformed(), 60);
    await test
      .http()
      .post('/auth/jwt/create/')
      .set(from('198.51.100.31'))
      .set('Content-Type', 'application/json')
      .send('{"email": ')
      .expect(400);
  });
});

describe('forged keys with a valid checksum', () => {
  let test: TestApp;
  beforeAll(async () => {
    // The default failed-credential limit, on an address of its own per request group.
    test = await startTestApp({ TRUST_PROXY: 'loopback', FAILED_AUTH_LIMIT_PER_MINUTE: '60' });
  });
  afterAll(() => test.close());

  it('cost one database lookup for 200 requests with the same forged key', async () => {
    const key = forgedKey();
    const lookups = countKeyLookups(test);
    try {
      const statuses: number[] = [];
      for (let batch = 0; batch < 4; batch++) {
        // 50 per address: under the failed-credential limit, so the cache alone is what is measured.
        const responses = await Promise.all(
          Array.from({ length: 50 }, () =>
            test
              .http()
              .get(ME)
              .set('X-Forwarded-For', `192.0.2.${batch + 1}`)
              .set('X-API-Key', key),
          ),
        );
        statuses.push(...responses.map((response) => response.status));
        expect(responses[0].body).toEqual({ detail: API_KEY_MESSAGE });
      }
      // Simultaneous first requests share one lookup, and its answer is then cached.
      expect(counts(statuses)).toEqual({ 401: 200 });
      expect(lookups.count()).toBe(1);
    } finally {
      lookups.restore();
    }
  });

  it('cost at most FAILED_AUTH_LIMIT_PER_MINUTE lookups for 200 different forged keys from one address', async () => {
    const lookups = countKeyLookups(test);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++)
        statuses.push(
          (await test.http().get(ME).set('X-Forwarded-For', '198.51.100.99').set('X-API-Key', forgedKey())).status,
        );
      expect(counts(statuses)).toEqual({ 401: 60, 429: 140 });
      expect(lookups.count()).toBe(60);
    } finally {
      lookups.restore();
    }
  });

  it('are forgotten when any key is created, and a JWT failure still answers the JWT shape', async () => {
    await test.http().get(ME).set('X-Forwarded-For', '198.51.100.120').set('X-API-Key', forgedKey()).expect(401);
    const cache = test.app.get(VerifiedKeyCache);
    expect(cache.unknownCount).toBeGreaterThan(0);
    const user = await signUp(test);
    const { key } = await createKey(test, user);
    expect(cache.unknownCount).toBe(0);
    await test.http().get(ME).set('X-Forwarded-For', '198.51.100.121').set('X-API-Key', key).expect(200);
    expect(
      (
        await test
          .http()
          .get(ME)
          .set('X-Forwarded-For', '198.51.100.121')
          .set('Authorization', 'Bearer x.y.z')
          .expect(401)
      ).body,
    ).toEqual(JWT_INVALID);
  });
});

describe('per-address limits in Redis, shared by two instances', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;
  const prefix = `kqs-test-${randomBytes(4).toString('hex')}:`;
  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      TRUST_PROXY: 'loopback',
      SIGNUP_LIMIT_PER_HOUR: '4',
      FAILED_AUTH_LIMIT_PER_MINUTE: '4',
    };
    [a, b] = await Promise.all([startTestApp(env, database), startTestApp(env, database)]);
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('counts sign-ups of one address on both instances together, with a TTL on the counter', async () => {
    const signUpAt = (instance: TestApp) =>
      instance
        .http()
        .post('/auth/users/')
        .set('X-Forwarded-For', '198.51.100.77')
        .send({ email: `shared-${randomBytes(6).toString('hex')}@example.com`, password: PASSWORD });
    const responses = await Promise.all([signUpAt(a), signUpAt(b), signUpAt(a), signUpAt(b), signUpAt(a), signUpAt(b)]);
    expect(counts(responses.map((response) => response.status))).toEqual({ 201: 4, 429: 2 });
    const keys = await redis.keys(`${prefix}pre:signup:*`);
    expect(keys).toEqual([`${prefix}pre:signup:198.51.100.77`]);
    expect(await redis.pttl(keys[0])).toBeGreaterThan(3_500_000);
  });

  it('refuses an address past its limit from memory afterwards, without asking Redis again', async () => {
    const reserve = jest.spyOn(a.app.get(CounterStore), 'reserve');
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const response = await a
          .http()
          .post('/auth/users/')
          .set('X-Forwarded-For', '198.51.100.78')
          .send({ email: `memo-${randomBytes(6).toString('hex')}@example.com`, password: PASSWORD });
        statuses.push(response.status);
        if (response.status === 429) expectThrottled(response, 3600);
      }
      expect(statuses).toEqual([201, 201, 201, 201, 429, 429, 429, 429]);
      expect(reserve).toHaveBeenCalledTimes(5);
    } finally {
      reserve.mockRestore();
    }
  });

  it('counts failed credentials of one address on both instances: at most one more evaluation per instance', async () => {
    const attempt = (instance: TestApp) =>
      instance.http().get(ME).set('X-Forwarded-For', '203.0.113.200').set('X-API-Key', forgedKey());
    const statuses: number[] = [];
    for (const instance of [a, b, a, b]) statuses.push((await attempt(instance)).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    // B saw the shared count reach the limit; A learns it from its own next failure.
    expectThrottled(await attempt(b), 60);
    expect((await attempt(a)).status).toBe(401);
    expectThrottled(await attempt(a), 60);
    expectThrottled(await attempt(b), 60);
  });
});
