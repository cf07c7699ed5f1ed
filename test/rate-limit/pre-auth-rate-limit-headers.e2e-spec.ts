import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../support/app.js';

const PASSWORD = 'correct horse battery';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Answer {
  status: number;
  headers: Record<string, string>;
}
const figures = (response: Answer) => ({
  status: response.status,
  limit: response.headers['ratelimit-limit'],
  remaining: response.headers['ratelimit-remaining'],
  policy: response.headers['ratelimit-policy'],
});
const resetOf = (response: Answer) => Number(response.headers['ratelimit-reset']);

/**
 * The per-address limits before authentication (sign-up, sign-in, token calls) send the address
 * bucket's RateLimit-* headers, as authenticated routes send the principal's (issue 19, "Also").
 */
describe.each([
  ['in memory', {}],
  ['counted in Redis', { REDIS_URL, REDIS_KEY_PREFIX: `kqs-test-${randomBytes(4).toString('hex')}:` }],
])('RateLimit-* headers of the per-address limits (%s)', (_, env: Record<string, string>) => {
  let test: TestApp;
  let address = 0;
  // Each test its own client address (TRUST_PROXY: the tests' loopback is the proxy).
  const from = () => ({ 'X-Forwarded-For': `198.51.100.${++address}` });
  const email = () => `headers-${randomBytes(6).toString('hex')}@example.com`;

  beforeAll(async () => {
    test = await startTestApp({
      ...env,
      TRUST_PROXY: 'loopback',
      SIGNUP_LIMIT_PER_HOUR: '3',
      SIGNIN_LIMIT_PER_MINUTE: '4',
      TOKEN_LIMIT_PER_MINUTE: '5',
    });
  });
  afterAll(() => test.close());

  it("sign-up: the address's hourly budget on every answer counted, the 400 and the 429 included", async () => {
    const client = from();
    const answers: Answer[] = [];
    answers.push(await test.http().post('/auth/users/').set(client).send({ email: email(), password: PASSWORD }));
    answers.push(await test.http().post('/auth/users/').set(client).send({ email: email() }));
    answers.push(await test.http().post('/auth/users/').set(client).send({ email: email(), password: PASSWORD }));
    // Refused by the store, then from this instance's memory before Nest runs (early-refusals.ts): the same figures.
    answers.push(await test.http().post('/auth/users/').set(client).send({ email: email(), password: PASSWORD }));
    answers.push(await test.http().post('/auth/users/').set(client).send({ email: email(), password: PASSWORD }));
    expect(answers.map(figures)).toEqual([
      { status: 201, limit: '3', remaining: '2', policy: '3;w=3600' },
      { status: 400, limit: '3', remaining: '1', policy: '3;w=3600' },
      { status: 201, limit: '3', remaining: '0', policy: '3;w=3600' },
      { status: 429, limit: '3', remaining: '0', policy: '3;w=3600' },
      { status: 429, limit: '3', remaining: '0', policy: '3;w=3600' },
    ]);
    for (const answer of answers) {
      expect(resetOf(answer)).toBeGreaterThan(3500);
      expect(resetOf(answer)).toBeLessThanOrEqual(3600);
    }
    for (const refused of answers.slice(3)) expect(refused.headers['retry-after']).toBe(String(resetOf(refused)));
  });

  it("sign-in: the address's minute budget, on a success and on a wrong password alike", async () => {
    const registered = email();
    await test.http().post('/auth/users/').set(from()).send({ email: registered, password: PASSWORD }).expect(201);
    const client = from();
    const answers: Answer[] = [];
    for (const password of [PASSWORD, 'wrong password', PASSWORD, PASSWORD, PASSWORD])
      answers.push(await test.http().post('/auth/jwt/create/').set(client).send({ email: registered, password }));
    expect(answers.map(figures)).toEqual([
      { status: 200, limit: '4', remaining: '3', policy: '4;w=60' },
      { status: 401, limit: '4', remaining: '2', policy: '4;w=60' },
      { status: 200, limit: '4', remaining: '1', policy: '4;w=60' },
      { status: 200, limit: '4', remaining: '0', policy: '4;w=60' },
      { status: 429, limit: '4', remaining: '0', policy: '4;w=60' },
    ]);
    for (const answer of answers) {
      expect(resetOf(answer)).toBeGreaterThanOrEqual(1);
      expect(resetOf(answer)).toBeLessThanOrEqual(60);
    }
    expect(answers[4].headers['retry-after']).toBe(String(resetOf(answers[4])));
  });

  it('refresh, verify and logout: one budget shared by the three, counted down across them', async () => {
    const registered = email();
    await test.http().post('/auth/users/').set(from()).send({ email: registered, password: PASSWORD }).expect(201);
    const tokens = (
      await test
        .http()
        .post('/auth/jwt/create/')
        .set(from())
        .send({ email: registered, password: PASSWORD })
        .expect(200)
    ).body as { access: string; refresh: string };
    const client = from();
    const answers: Answer[] = [
      await test.http().post('/auth/jwt/refresh/').set(client).send({ refresh: tokens.refresh }),
      await test.http().post('/auth/jwt/verify/').set(client).send({ token: tokens.access }),
      await test.http().post('/auth/jwt/verify/').set(client).send({ token: 'not a token' }),
      await test.http().post('/auth/jwt/logout/').set(client).send({ refresh: tokens.refresh }),
      await test.http().post('/auth/jwt/refresh/').set(client).send({ refresh: tokens.refresh }),
      await test.http().post('/auth/jwt/verify/').set(client).send({ token: tokens.access }),
    ];
    expect(answers.map(figures)).toEqual([
      { status: 200, limit: '5', remaining: '4', policy: '5;w=60' },
      { status: 200, limit: '5', remaining: '3', policy: '5;w=60' },
      { status: 401, limit: '5', remaining: '2', policy: '5;w=60' },
      { status: 204, limit: '5', remaining: '1', policy: '5;w=60' },
      { status: 401, limit: '5', remaining: '0', policy: '5;w=60' },
      { status: 429, limit: '5', remaining: '0', policy: '5;w=60' },
    ]);
  });
});

describe('the OpenAPI document', () => {
  let test: TestApp;
  let document: { paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>> };
  let components: Record<string, { schema: { pattern?: string } }>;

  beforeAll(async () => {
    test = await startTestApp();
    const body = (await test.http().get('/openapi.json').expect(200)).body;
    document = body;
    components = body.components.headers;
  });
  afterAll(() => test.close());

  const address = (name: string) => ({ $ref: `#/components/headers/Address-RateLimit-${name}` });
  const addressHeaders = {
    'RateLimit-Limit': address('Limit'),
    'RateLimit-Remaining': address('Remaining'),
    'RateLimit-Reset': address('Reset'),
    'RateLimit-Policy': address('Policy'),
  };

  it.each([
    ['/auth/users/', '201'],
    ['/auth/jwt/create/', '200'],
    ['/auth/jwt/create/', '401'],
    ['/auth/jwt/create/', '429'],
    ['/auth/jwt/refresh/', '200'],
    ['/auth/jwt/verify/', '200'],
    ['/auth/jwt/logout/', '204'],
    ['/auth/users/', '429'],
  ])("documents the address bucket's RateLimit headers on POST %s %s", (path, status) => {
    expect(document.paths[path].post.responses[status].headers).toMatchObject(addressHeaders);
  });

  it('describes the address windows: a minute, and an hour for sign-up', () => {
    expect(components['Address-RateLimit-Policy'].schema.pattern).toBe('^[0-9]+;w=(60|3600)$');
    // Authenticated routes keep the principal's headers.
    expect(document.paths['/v1/query/'].post.responses['200'].headers).toMatchObject({
      'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
    });
  });
});
