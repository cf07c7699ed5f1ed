import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { madeUpKey } from '../support/core.js';
import { CapturedLogs, metricValue } from '../support/ops.js';
import { MetricsServer } from '../../src/observability/metrics-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids, JSON logs and Prometheus metrics', () => {
  const logs = new CapturedLogs();
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ LOG_LEVEL: 'info' }, undefined, { logStream: logs });
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  describe('X-Request-Id', () => {
    it('gives every response a fresh id when the client sent none', async () => {
      const first = await test.http().get('/health/').expect(200);
      const second = await test.http().get('/nowhere/').expect(404);
      expect(first.headers['x-request-id']).toMatch(UUID);
      expect(second.headers['x-request-id']).toMatch(UUID);
      expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    });

    it('keeps a sane incoming id and logs the request under it', async () => {
      const id = 'edge-7f3a9c21.trace:0001';
      await test.http().get('/health/').set('X-Request-Id', id).expect(200).expect('X-Request-Id', id);
      const line = logs.entries().find((entry) => entry.request_id === id);
      expect(line).toMatchObject({
        level: 'info',
        method: 'GET',
        route: '/health',
        status: '200',
        message: 'request completed',
      });
      expect(typeof line?.duration_ms).toBe('number');
    });

    it.each([
      ['too short', 'abc'],
      ['too long', 'x'.repeat(129)],
      ['with spaces or quotes', 'id "with" spaces'],
    ])('replaces an incoming id that is %s', async (_, id) => {
      const response = await test.http().get('/health/').set('X-Request-Id', id).expect(200);
      expect(response.headers['x-request-id']).toMatch(UUID);
    });

    it('is on error responses too, including a body the parser refuses', async () => {
      const response = await test
        .http()
        .post('/auth/jwt/create/')
        .set('Content-Type', 'application/json')
        .send('{bad json')
        .expect(400);
      expect(response.headers['x-request-id']).toMatch(UUID);
    });
  });

  describe('logs', () => {
    it('writes one JSON object per line, with level, time and message', () => {
      const entries = logs.entries();
      expect(entries.length).toBeGreaterThan(3);
      for (const entry of entries) {
        expect(entry).toEqual(
          expect.objectContaining({ level: expect.any(String), time: expect.any(String), message: expect.any(String) }),
        );
      }
    });

    it('names the principal of an authenticated request by user id and key prefix, never by key', async () => {
      const key = await createKey(test, alice, 'logged');
      const response = await test.http().get('/auth/users/me/').set('X-API-Key', key.key).expect(200);
      const line = logs.entries().find((entry) => entry.request_id === response.headers['x-request-id']);
      expect(line).toMatchObject({
        route: '/auth/users/me',
        status: '200',
        user_id: response.body.id,
        key_prefix: key.key_prefix,
      });
      expect(logs.text).not.toContain(key.key);
    });
  });

  describe('GET /metrics', () => {
    async function scrape(): Promise<string> {
      const response = await test.http().get('/metrics').expect(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.text;
    }

    it('is public and counts requests by route pattern and status, with latency histograms', async () => {
      const before =
        metricValue(await scrape(), 'http_requests_total', { method: 'GET', route: '/health', status: '200' }) ?? 0;
      await test.http().get('/health/').expect(200);
      await test.http().get('/health').expect(200);
      const text = await scrape();
      expect(metricValue(text, 'http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(
        before + 2,
      );
      expect(
        metricValue(text, 'http_request_duration_seconds_count', { route: '/health', status: '200' }),
      ).toBeGreaterThanOrEqual(before + 2);
      expect(text).toMatch(
        /http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/health",status="200"\}/,
      );
    });

    it('labels by route pattern, not by the path with its ids, and unknown paths as (unmatched)', async () => {
      await test
        .http()
        .patch(`/v1/billings/api-keys/${crypto.randomUUID()}/update/`)
        .set(alice.auth)
        .send({ expires_at: null })
        .expect(404);
      await test.http().get(`/no/such/${crypto.randomUUID()}`).expect(404);
      const text = await scrape();
      expect(
        metricValue(text, 'http_requests_total', { route: '/v1/billings/api-keys/:keyId/update', status: '404' }),
      ).toBeGreaterThanOrEqual(1);
      expect(metricValue(text, 'http_requests_total', { route: '(unmatched)', status: '404' })).toBeGreaterThanOrEqual(
        1,
      );
      expect(text).not.toMatch(/route="\/no\/such/);
    });

    it('counts API-key and JWT verifications by outcome', async () => {
      const key = await createKey(test, alice, 'metered');
      const before = await scrape();
      await test.http().get('/auth/users/me/').set('X-API-Key', key.key).expect(200);
      await test.http().get('/auth/users/me/').set('X-API-Key', madeUpKey('z')).expect(401);
      await test.http().get('/auth/users/me/').set(alice.auth).expect(200);
      await test.http().get('/auth/users/me/').set('Authorization', 'Bearer not.a.jwt').expect(401);
      const after = await scrape();
      const delta = (name: string, outcome: string) =>
        (metricValue(after, name, { outcome }) ?? 0) - (metricValue(before, name, { outcome }) ?? 0);
      expect(delta('kqs_api_key_verifications_total', 'valid')).toBe(1);
      expect(delta('kqs_api_key_verifications_total', 'invalid')).toBe(1);
      expect(delta('kqs_jwt_verifications_total', 'valid')).toBe(1);
      expect(delta('kqs_jwt_verifications_total', 'invalid')).toBe(1);
    });

    it('exposes the database pool, credits spent, 429s and the process figures', async () => {
      const text = await scrape();
      expect(metricValue(text, 'kqs_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(metricValue(text, 'kqs_db_pool_connections', { state: 'max' })).toBe(10);
      expect(text).toContain('# TYPE kqs_credits_spent_total counter');
      expect(text).toContain('# TYPE kqs_rate_limited_total counter');
      expect(text).toContain('process_resident_memory_bytes');
      expect(text).toContain('http_requests_in_flight');
    });
  });

  describe('a 500', () => {
    beforeAll(() => test.db.query('ALTER TABLE users RENAME TO users_away'));
    afterAll(() => test.db.query('ALTER TABLE users_away RENAME TO users'));

    it('carries the request id in its body and header, and the log has the error under that id', async () => {
      const response = await test
        .http()
        .post('/auth/users/')
        .send({ email: 'five-hundred@example.com', password: 'long enough pw' })
        .expect(500);
      expect(response.body).toEqual({
        detail: expect.stringMatching(/retry/i),
        request_id: response.headers['x-request-id'],
      });
      const lines = logs
        .entries()
        .filter(
          (entry) =>
            String(entry.message).includes(response.body.request_id) || entry.request_id === response.body.request_id,
        );
      expect(lines.some((entry) => entry.level === 'error')).toBe(true);
      expect(lines.some((entry) => entry.status === '500')).toBe(true);
    });
  });

  // Last: a second application in this file takes over the process's log stream.
  describe('METRICS_PORT', () => {
    let separate: TestApp;
    beforeAll(async () => {
      separate = await startTestApp({ METRICS_PORT: '0' });
    });
    afterAll(() => separate.close());

    it('serves GET /metrics on its own port only: the public port answers 404 and its document leaves it out', async () => {
      await separate.http().get('/health/').expect(200);
      await separate.http().get('/metrics').expect(404);
      const metricsUrl = separate.app.get(MetricsServer).url;
      const scrape = await fetch(`${metricsUrl}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(
        metricValue(await scrape.text(), 'http_requests_total', { method: 'GET', route: '/health', status: '200' }),
      ).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${metricsUrl}/health/`)).status).toBe(404);
      const document = (await separate.http().get('/openapi.json').expect(200)).body as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(document.paths)).not.toContain('/metrics');
    });
  });
});

// Its own application, last in the file: Nest's static Logger writes to the application created last.
describe('a flood of 429s', () => {
  const floodLogs = new CapturedLogs();
  let flooded: TestApp;
  beforeAll(async () => {
    flooded = await startTestApp({ LOG_LEVEL: 'info', FAILED_AUTH_LIMIT_PER_MINUTE: '2' }, undefined, {
      logStream: floodLogs,
    });
  });
  afterAll(() => flooded.close());

  const forged = (i: number) =>
    flooded
      .http()
      .get('/auth/users/me/')
      .set('X-API-Key', madeUpKey(`flood${i}`));
  const throttledLines = () =>
    floodLogs.entries().filter((entry) => entry.message === 'request completed' && entry.status === '429');

  it('is logged once a second per address, each line saying how many it stands for; the metrics count all', async () => {
    for (let i = 0; i < 2; i++) await forged(i).expect(401);
    const started = performance.now();
    for (let i = 2; i < 32; i++) await forged(i).expect(429);
    const seconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await forged(32).expect(429);
    // One line a second at most (a few tens of ms for the 30 here: one line), and each 429 is either
    // logged or counted in the next line's throttled_unlogged.
    const lines = throttledLines();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(lines[0].throttled_unlogged).toBeUndefined();
    const unlogged = lines.reduce((sum, line) => sum + Number(line.throttled_unlogged ?? 0), 0);
    expect(lines.length + unlogged).toBe(31);
    // Other answers are all logged.
    expect(floodLogs.entries().filter((entry) => entry.status === '401')).toHaveLength(2);
    const metrics = (await flooded.http().get('/metrics').expect(200)).text;
    expect(metricValue(metrics, 'http_requests_total', { route: '/auth/users/me', status: '429' })).toBe(31);
  });
});
