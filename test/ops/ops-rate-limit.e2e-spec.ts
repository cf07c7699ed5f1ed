import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { BAD_CREDENTIALS, freshMinute, sleep, until } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { SYNC_INTERVAL_MS } from '../../src/rate-limit/principal-rate-limiter.js';
import { MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_EMAIL } from '../../src/rate-limit/sign-in-throttle.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const THROTTLED = /^Request was throttled\. Expected available in (\d+) seconds\.$/;
const ME = '/auth/users/me/';

/**
 * Two instances on one fresh database, their counters in Redis under a key prefix of their own, and a
 * Redis client to inspect them, as a describe block's beforeAll/afterAll. Read them inside the tests.
 */
interface RedisPair {
  a: TestApp;
  b: TestApp;
  redis: Redis;
  prefix: string;
}

function twoInstancesSharingRedis(env: Record<string, string>): RedisPair {
  const pair = { prefix: `kqs-test-${randomBytes(4).toString('hex')}:` } as RedisPair;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = { ...env, REDIS_URL, REDIS_KEY_PREFIX: pair.prefix };
    [pair.a, pair.b] = await Promise.all([startTestApp(shared, database), startTestApp(shared, database)]);
    pair.redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await pair.redis.keys(`${pair.prefix}*`);
    if (keys.length > 0) await pair.redis.del(...keys);
    pair.redis.disconnect();
    await pair.a?.close();
    await pair.b?.close();
    await database?.drop();
  });
  return pair;
}

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

async function failSignIn(test: TestApp, email: string, address: string) {
  return test
    .http()
    .post('/auth/jwt/create/')
    .set('X-Forwarded-For', address)
    .send({ email, password: 'wrong password!' });
}

describe('per-principal request limits (RATE_LIMIT_PER_MINUTE)', () => {
  describe('on one instance, in memory', () => {
    let test: TestApp;
    let alice: SignedInUser;

    beforeAll(async () => {
      test = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
      alice = await signUp(test);
    });
    afterAll(() => test.close());

    it('answers 429 with Retry-After past the limit for one API key, and each key has its own budget', async () => {
      await freshMinute();
      const first = await createKey(test, alice, 'limited');
      const second = await createKey(test, alice, 'other');
      for (let i = 0; i < 5; i++) await test.http().get(ME).set('X-API-Key', first.key).expect(200);
      expectThrottled(await test.http().get(ME).set('X-API-Key', first.key), 60);
      expectThrottled(await test.http().get(ME).set('Authorization', `Bearer ${first.key}`), 60);
      await test.http().get(ME).set('X-API-Key', second.key).expect(200);
    });

    it('limits a user signed in with a JWT on their own budget, and not other users', async () => {
      await freshMinute();
      const bob = await signUp(test);
      const carol = await signUp(test);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await test.http().get(ME).set(bob.auth)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      await test.http().get(ME).set(carol.auth).expect(200);
    });

    it('counts a non-admin refused by an admin-only route, whose 403 carries the RateLimit-* headers', async () => {
      await freshMinute();
      const dave = await signUp(test);
      const adminOnly = '/v1/domains/any-domain/documents';
      const refused = await test.http().get(adminOnly).set(dave.auth).expect(403);
      expect(refused.headers['ratelimit-limit']).toBe('5');
      expect(refused.headers['ratelimit-remaining']).toBe('4');
      for (let i = 0; i < 4; i++) await test.http().get(adminOnly).set(dave.auth).expect(403);
      expectThrottled(await test.http().get(adminOnly).set(dave.auth), 60);
    });

    it('does not count unauthenticated or refused requests', async () => {
      for (let i = 0; i < 10; i++) await test.http().get('/health/').expect(200);
      for (let i = 0; i < 10; i++) await test.http().get(ME).expect(401);
    });
  });

  describe('on two instances sharing Redis', () => {
    const pair = twoInstancesSharingRedis({ RATE_LIMIT_PER_MINUTE: '6' });

    it('counts one key across both instances: each learns what the other served at its next sync', async () => {
      const { a, b, redis, prefix } = pair;
      await freshMinute();
      const user = await signUp(a);
      const { key } = await createKey(a, user, 'shared');
      // The shared total in Redis once it reaches `total`; then a few sync intervals for an instance to
      // read it back (a fixed wait alone was too short when a busy machine delayed a sync).
      const sharedTotal = async (total: number) => {
        await until(async () => {
          const [counter] = await redis.keys(`${prefix}rl:key:*`);
          return counter !== undefined && Number(await redis.get(counter)) === total;
        });
        await sleep(SYNC_INTERVAL_MS * 5);
      };
      for (let i = 0; i < 4; i++) await a.http().get(ME).set('X-API-Key', key).expect(200);
      await sharedTotal(4);
      // B has not served this key yet; it learns the shared total when it pushes its first request.
      await b.http().get(ME).set('X-API-Key', key).expect(200);
      await sharedTotal(5);
      await b.http().get(ME).set('X-API-Key', key).expect(200);
      expectThrottled(await b.http().get(ME).set('X-API-Key', key), 60);
      await sharedTotal(6);
      expectThrottled(await a.http().get(ME).set('X-API-Key', key), 60);
      const stored = await redis.keys(`${prefix}rl:key:*`);
      expect(stored.length).toBeGreaterThanOrEqual(1);
      expect(await redis.pttl(stored[0])).toBeGreaterThan(0);
    });
  });
});

describe('sign-in throttling', () => {
  describe('in memory', () => {
    let test: TestApp;
    beforeAll(async () => {
      test = await startTestApp({ TRUST_PROXY: 'loopback' });
    });
    afterAll(() => test.close());

    it(`refuses every attempt for an e-mail after ${MAX_FAILURES_PER_EMAIL} failures, even the right password`, async () => {
      const victim = await signUp(test);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
        const response = await failSignIn(test, victim.email, `198.51.100.${i + 1}`);
        expect(response.status).toBe(401);
        expect(response.body).toEqual(BAD_CREDENTIALS);
      }
      const blocked = await test
        .http()
        .post('/auth/jwt/create/')
        .set('X-Forwarded-For', '203.0.113.9')
        .send({ email: victim.email, password: victim.password });
      expectThrottled(blocked, 15 * 60);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(14 * 60);
      // Tokens already issued keep working: this is not a lock-out of the account.
      await test.http().get(ME).set(victim.auth).expect(200);
    });

    it('does not let a success reset another address, nor count successes', async () => {
      const user = await signUp(test);
      const attacker = '198.51.100.200';
      for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
        const response = await failSignIn(test, `nobody${i}@example.com`, attacker);
        expect(response.status).toBe(401);
      }
      // The legitimate user signs in from elsewhere, many times.
      for (let i = 0; i < 3; i++) {
        await test
          .http()
          .post('/auth/jwt/create/')
          .set('X-Forwarded-For', '192.0.2.1')
          .send({ email: user.email, password: user.password })
          .expect(200);
      }
      expectThrottled(await failSignIn(test, 'someone-else@example.com', attacker), 15 * 60);
      expectThrottled(
        await test
          .http()
          .post('/auth/jwt/create/')
          .set('X-Forwarded-For', attacker)
          .send({ email: user.email, password: user.password }),
        15 * 60,
      );
    });

    it('does not count a malformed request as a failure', async () => {
      const user = await signUp(test);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL + 2; i++) {
        await test
          .http()
          .post('/auth/jwt/create/')
          .set('X-Forwarded-For', '192.0.2.77')
          .send({ email: user.email })
          .expect(400);
      }
      await test
        .http()
        .post('/auth/jwt/create/')
        .set('X-Forwarded-For', '192.0.2.77')
        .send({ email: user.email, password: user.password })
        .expect(200);
    });
  });

  describe('in Redis, shared by two instances', () => {
    const pair = twoInstancesSharingRedis({ TRUST_PROXY: 'loopback' });

    it('throttles on the other instance too, and lifts the block when the window passes', async () => {
      const { a, b, redis, prefix } = pair;
      const user = await signUp(a);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
        const instance = i % 2 === 0 ? a : b;
        expect((await failSignIn(instance, user.email, `198.51.100.${i + 1}`)).status).toBe(401);
      }
      const right = { email: user.email, password: user.password };
      expectThrottled(
        await b.http().post('/auth/jwt/create/').set('X-Forwarded-For', '192.0.2.5').send(right),
        15 * 60,
      );
      expectThrottled(
        await a.http().post('/auth/jwt/create/').set('X-Forwarded-For', '192.0.2.5').send(right),
        15 * 60,
      );

      // Every counter carries its window as a TTL (no permanent lock-out); end the window early.
      const keys = await redis.keys(`${prefix}signin:email:*`);
      expect(keys).toHaveLength(1);
      const ttl = await redis.pttl(keys[0]);
      expect(ttl).toBeGreaterThan(14 * 60_000);
      expect(ttl).toBeLessThanOrEqual(15 * 60_000);
      await redis.pexpire(keys[0], 1);
      await sleep(20);
      await a.http().post('/auth/jwt/create/').set('X-Forwarded-For', '192.0.2.5').send(right).expect(200);
    });

    it('keeps no e-mail address in Redis keys', async () => {
      const { redis, prefix } = pair;
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.join(' ')).not.toContain('@');
    });
  });
});

describe('while Redis is unreachable', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => test.close());

  it('still signs users in and serves them, counting the limit on this instance alone', async () => {
    await freshMinute();
    const user = await signUp(test);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await test.http().get(ME).set(user.auth)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await failSignIn(test, user.email, '127.0.0.1')).status).toBe(401);
  });
});
