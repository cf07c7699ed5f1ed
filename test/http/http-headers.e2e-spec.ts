import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { freshMinute, NOT_FOUND } from '../support/core.js';
import { createDomain, HANDBOOK } from '../support/knowledge.js';

const APP_ORIGIN = 'https://app.example.com';
const OTHER_ORIGIN = 'https://evil.example.net';
const EXPOSED = [
  'X-Request-Id',
  'X-Credits-Remaining',
  'X-Credits-Reset',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
];

const headerList = (value: string | undefined) => (value ?? '').split(',').map((name) => name.trim().toLowerCase());

describe('browsers on another origin (CORS_ORIGINS)', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ CORS_ORIGINS: `${APP_ORIGIN},http://localhost:5173` });
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  it('answers a preflight from a listed origin with 204 and what the browser needs', async () => {
    const response = await test
      .http()
      .options('/v1/billings/api-keys/')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, idempotency-key')
      .expect(204);
    expect(response.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(headerList(response.headers.vary)).toContain('origin');
    expect(headerList(response.headers['access-control-allow-methods'])).toEqual(
      expect.arrayContaining(['get', 'post', 'patch', 'delete']),
    );
    expect(headerList(response.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-api-key', 'idempotency-key', 'x-request-id']),
    );
    expect(Number(response.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.text).toBe('');
  });

  it('lets a listed origin read the answer and its exposed headers', async () => {
    const response = await test.http().get('/auth/users/me/').set('Origin', APP_ORIGIN).set(alice.auth).expect(200);
    expect(response.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(headerList(response.headers.vary)).toContain('origin');
    expect(headerList(response.headers['access-control-expose-headers'])).toEqual(
      EXPOSED.map((name) => name.toLowerCase()),
    );
    expect(response.body.email).toBe(alice.email);
  });

  it('gives an error answer the same CORS headers, so the page can read the detail', async () => {
    const response = await test.http().get('/auth/users/me/').set('Origin', 'http://localhost:5173').expect(401);
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(response.body.detail).toBe('Authentication credentials were not provided.');
  });

  it('gives an unlisted origin no Access-Control-Allow-Origin, on a preflight or a request', async () => {
    const preflight = await test
      .http()
      .options('/v1/query/')
      .set('Origin', OTHER_ORIGIN)
      .set('Access-Control-Request-Method', 'POST');
    // The preflight itself succeeds (it reveals nothing), but without the allow-origin header the
    // browser refuses to send the request.
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const request = await test.http().get('/auth/users/me/').set('Origin', OTHER_ORIGIN).set(alice.auth).expect(200);
    expect(request.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('matches origins exactly: another scheme, port or a suffix is another origin', async () => {
    for (const origin of [
      'http://app.example.com',
      'https://app.example.com:8443',
      'https://app.example.com.evil.net',
      'null',
    ]) {
      const response = await test.http().get('/health/').set('Origin', origin).expect(200);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('answers a preflight for an unknown route without error, and the request itself is the usual 404', async () => {
    const preflight = await test
      .http()
      .options('/v1/no-such-thing/')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(204);
    const response = await test.http().get('/v1/no-such-thing/').set('Origin', APP_ORIGIN).set(alice.auth).expect(404);
    expect(response.body).toEqual(NOT_FOUND);
    expect(response.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });
});

describe('without CORS_ORIGINS (the default)', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  it('allows no origin at all', async () => {
    const response = await test.http().get('/health/').set('Origin', APP_ORIGIN).expect(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await test
      .http()
      .options('/health/')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(405);
    expect(preflight.headers.allow).toBe('GET, HEAD');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('standard response headers', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  it('sends nosniff and no-referrer on every API answer, errors included', async () => {
    for (const response of [
      await test.http().get('/health/').expect(200),
      await test.http().get('/auth/users/me/').expect(401),
      await test.http().get('/nowhere/').expect(404),
      await test.http().post('/auth/users/').send('{bad json').set('Content-Type', 'application/json').expect(400),
    ]) {
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
    }
  });

  it('marks every answer that carries a token or a full key Cache-Control: no-store', async () => {
    const pair = await test
      .http()
      .post('/auth/jwt/create/')
      .send({ email: alice.email, password: alice.password })
      .expect(200);
    expect(pair.headers['cache-control']).toBe('no-store');
    const refreshed = await test.http().post('/auth/jwt/refresh/').send({ refresh: pair.body.refresh }).expect(200);
    expect(refreshed.headers['cache-control']).toBe('no-store');
    const created = await test
      .http()
      .post('/v1/billings/api-keys/')
      .set(alice.auth)
      .send({ name: 'no-store' })
      .expect(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const rotated = await test
      .http()
      .post(`/v1/billings/api-keys/${created.body.id}/rotate/`)
      .set(alice.auth)
      .expect(201);
    expect(rotated.headers['cache-control']).toBe('no-store');
  });
});

describe('rate-limit headers', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ RATE_LIMIT_PER_MINUTE: '4' });
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  it('tells an authenticated caller its limit, what is left and when the window frees up, then 429 with Retry-After', async () => {
    await freshMinute();
    const { key } = await createKey(test, alice, 'paced'); // a JWT request: the key's own window is untouched
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await test.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
      expect(response.headers['ratelimit-limit']).toBe('4');
      expect(response.headers['ratelimit-policy']).toBe('4;w=60');
      const reset = Number(response.headers['ratelimit-reset']);
      expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true);
      remaining.push(Number(response.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    const throttled = await test.http().get('/auth/users/me/').set('X-API-Key', key).expect(429);
    expect(throttled.headers['ratelimit-remaining']).toBe('0');
    expect(throttled.headers['ratelimit-limit']).toBe('4');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(throttled.headers['retry-after']).toBe(throttled.headers['ratelimit-reset']);
  });

  it('sends them on errors after authentication too, and never on an unauthenticated request', async () => {
    const bob = await signUp(test);
    const notFound = await test
      .http()
      .get('/v1/documents/00000000-0000-4000-8000-000000000000/')
      .set(bob.auth)
      .expect(404);
    expect(notFound.headers['ratelimit-remaining']).toBe('3');
    const anonymous = await test.http().get('/auth/users/me/').expect(401);
    expect(anonymous.headers['ratelimit-limit']).toBeUndefined();
    const health = await test.http().get('/health/').expect(200);
    expect(health.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('credit headers on every metered answer', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    await createDomain(test, 'handbook', HANDBOOK);
  });
  afterAll(() => test.close());

  it('puts X-Credits-Remaining and X-Credits-Reset on a chat message, as on a query', async () => {
    const session = await test
      .http()
      .post('/v1/chat/sessions/')
      .set(alice.auth)
      .send({ domain: 'handbook' })
      .expect(201);
    const message = await test
      .http()
      .post(`/v1/chat/sessions/${session.body.id}/messages/`)
      .set(alice.auth)
      .send({ content: 'How do I rotate a key?' })
      .expect(201);
    expect(message.headers['x-credits-remaining']).toBe('999');
    const query = await test
      .http()
      .post('/v1/query/')
      .set(alice.auth)
      .send({ query: 'How do I rotate a key?', domain: 'handbook' })
      .expect(200);
    expect(query.headers['x-credits-remaining']).toBe('998');
    expect(message.headers['x-credits-reset']).toBe(query.headers['x-credits-reset']);
    expect(Date.parse(message.headers['x-credits-reset'])).toBeGreaterThan(Date.now());
  });
});
