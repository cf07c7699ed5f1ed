import pg from 'pg';
import { KeyChangeListener } from '../../src/api-keys/key-change-listener.js';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { sleep } from '../support/core.js';
import { CapturedLogs } from '../support/ops.js';
import { createThrowawayPostgres, type ThrowawayPostgres } from '../support/throwaway-postgres.js';

const KEYS = '/v1/billings/api-keys/';

/** Polls until `check` holds, returning how long that took; fails after `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await check()) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`condition not met within ${limitMs} ms`);
}

/**
 * The database goes away and comes back, on a private PostgreSQL cluster the test creates and stops
 * (the machine's shared server is never touched). Liveness stays up, readiness and every request
 * that needs the database answer 503 quickly, the service recovers by itself, and nothing it
 * acknowledged is lost.
 */
describe('database outage and recovery', () => {
  let cluster: ThrowawayPostgres;
  let test: TestApp;
  let alice: SignedInUser;
  let aliceKey: string;
  const acknowledged = new Set<string>();
  const statuses: number[] = [];
  const logs = new CapturedLogs();

  async function timed(send: () => Promise<{ status: number; body: unknown }>) {
    const started = Date.now();
    const response = await send();
    statuses.push(response.status);
    return { status: response.status, body: response.body, ms: Date.now() - started };
  }

  /** Keeps creating keys, remembering every one the service answered 201 for. */
  function writer(stop: { done: boolean }): Promise<void> {
    return (async () => {
      while (!stop.done) {
        const response = await test
          .http()
          .post(KEYS)
          .set(alice.auth)
          .send({ name: `w${Date.now()}` })
          .catch(() => null);
        if (response) statuses.push(response.status);
        if (response?.status === 201) acknowledged.add(response.body.id);
        await sleep(20);
      }
    })();
  }

  beforeAll(async () => {
    cluster = await createThrowawayPostgres();
    const admin = new pg.Client(cluster.url);
    await admin.connect();
    await admin.query('CREATE DATABASE kqs_fault');
    await admin.end();
    const url = cluster.url.replace(/\/postgres$/, '/kqs_fault');
    test = await startTestApp(
      { LOG_LEVEL: 'error' },
      { url, name: 'kqs_fault', drop: () => Promise.resolve() },
      { logStream: logs },
    );
    // The helper's own connection dies with the server; that is expected here.
    test.db.on('error', () => undefined);
    alice = await signUp(test);
    aliceKey = (await createKey(test, alice, 'before')).key;
    await test.http().get('/auth/users/me/').set('X-API-Key', aliceKey).expect(200);
  }, 60_000);

  afterAll(async () => {
    await test?.app.close().catch(() => undefined);
    await cluster?.destroy();
  });

  async function outageAndRecovery(mode: 'fast' | 'immediate'): Promise<void> {
    // Changes reach the instance again (after the previous case's outage): until they do, what it caches
    // lives a second only, and the listener's return clears it.
    const listener = test.app.get(KeyChangeListener);
    await within(10_000, () => Promise.resolve(listener.synced));
    // Alice looks at who she is (her account, role and organizations are cached from here on).
    await test.http().get('/auth/users/me/').set(alice.auth).expect(200);
    // Writes acknowledged before the outage, and (below) after it: counted, not timed, so that a busy
    // machine's slower writes still give the check at the end something to find (it saw 5, not 6, in a
    // full run).
    await writesAcknowledged(3);
    await cluster.stop(mode);

    // Liveness never depends on the database.
    await test.http().get('/health/').expect(200);
    await within(5_000, async () => (await test.http().get('/health/ready/')).status === 503);
    const ready = await test.http().get('/health/ready/');
    expect(ready.body).toEqual({ status: 'error', detail: expect.any(String), timestamp: expect.any(String) });

    // Everything that needs the database: a 503 with a detail, quickly (not a 500, not a hang).
    const attempts = [
      () => test.http().get(KEYS).set(alice.auth),
      () => test.http().post(KEYS).set(alice.auth).send({ name: 'during' }),
      () => test.http().get('/v1/billings/subscription/').set('X-API-Key', aliceKey),
      () => test.http().get('/v1/billings/subscription/').set(alice.auth),
      () => test.http().post('/auth/jwt/create/').send({ email: alice.email, password: alice.password }),
      () =>
        test
          .http()
          .post('/auth/users/')
          .send({ email: `new${Date.now()}@example.com`, password: 'long enough pw' }),
    ];
    for (const attempt of attempts) {
      const response = await timed(attempt);
      expect(response.status).toBe(503);
      expect(response.body).toEqual({ detail: expect.any(String) });
      expect(response.ms).toBeLessThan(5_000);
    }

    // Who the caller is was read within the last 30 s (the account cache the JWT check uses): that
    // answer needs no database, so it keeps working through the outage.
    await test.http().get('/auth/users/me/').set(alice.auth).expect(200);

    await sleep(500);
    await cluster.start();
    const recoveredIn = await within(15_000, async () => (await test.http().get('/health/ready/')).status === 200);
    expect(recoveredIn).toBeLessThan(15_000);
    await within(
      10_000,
      async () => (await test.http().post(KEYS).set(alice.auth).send({ name: 'after' })).status === 201,
    );
    await test.http().get('/auth/users/me/').set('X-API-Key', aliceKey).expect(200);
    await writesAcknowledged(3);
  }

  /** Waits until the writer has had `count` more of its keys acknowledged (201). */
  async function writesAcknowledged(count: number): Promise<void> {
    const from = acknowledged.size;
    await within(10_000, () => Promise.resolve(acknowledged.size >= from + count));
  }

  for (const mode of ['fast', 'immediate'] as const) {
    it(`survives a ${mode} stop of PostgreSQL: 503s while it is down, recovery on its own, no acknowledged write lost`, async () => {
      const stop = { done: false };
      const writing = writer(stop);
      try {
        await outageAndRecovery(mode);
      } finally {
        stop.done = true;
        await writing;
        // Leave a running server for the next case even when this one failed half-way.
        await cluster.start().catch(() => undefined);
      }

      // Every key the service acknowledged is stored.
      const check = new pg.Client(cluster.url.replace(/\/postgres$/, '/kqs_fault'));
      await check.connect();
      const { rows } = await check.query('SELECT id FROM api_keys WHERE id = ANY($1::uuid[])', [[...acknowledged]]);
      await check.end();
      expect(acknowledged.size).toBeGreaterThan(5);
      expect(rows).toHaveLength(acknowledged.size);
      // A 500 would be logged with its stack: show it if there is one.
      const unexpected = statuses.filter((status) => status >= 500 && status !== 503);
      expect({
        unexpected,
        errors: unexpected.length ? logs.entries().filter((entry) => entry.level === 'error') : [],
      }).toEqual({ unexpected: [], errors: [] });
    }, 90_000);
  }
});
