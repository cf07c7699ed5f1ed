import { createKey, signIn, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { fromNow, keyWorks, sleep } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** startTestApp's instance, with the service's JSON log lines collected into `lines`. */
function bootWithLog(database: TestDatabase, lines: string[]): Promise<TestApp> {
  return startTestApp({}, database, { logger: false, logStream: { write: (line: string) => void lines.push(line) } });
}

const KEYS = '/v1/billings/api-keys/';

/** Polls `key` on `instance` until it is refused; returns how long that took, or Infinity after `limitMs`. */
async function msUntilRefused(instance: TestApp, key: string, since: number, limitMs = 3000): Promise<number> {
  while (Date.now() - since < limitMs) {
    if (!(await keyWorks(instance, key))) return Date.now() - since;
    await sleep(25);
  }
  return Infinity;
}

/** Polls `GET /auth/users/me/` on `instance` until it answers `status`; how long that took, or Infinity. */
async function msUntilStatus(
  instance: TestApp,
  auth: Record<string, string>,
  status: number,
  since: number,
  limitMs = 3000,
): Promise<number> {
  while (Date.now() - since < limitMs) {
    if ((await instance.http().get('/auth/users/me/').set(auth)).status === status) return Date.now() - since;
    await sleep(25);
  }
  return Infinity;
}

/**
 * Two instances of the service on one database, as behind a load balancer. A key change made through
 * instance A must reach instance B, which has already verified (and cached) the key, within 1 second.
 */
describe('API-key changes across instances', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let owner: SignedInUser;
  const bootLog: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // Booted together, as a deployment's replicas are: migrations and the admin account must not race.
    // A lost race shows in the log (a failed migration, then Nest retrying the boot), so it is captured.
    [a, b] = await Promise.all([bootWithLog(database, bootLog), bootWithLog(database, bootLog)]);
    owner = await signUp(a);
    // Both instances listen for key changes before any test relies on it.
    const deadline = Date.now() + 5000;
    for (;;) {
      const { rows } = await a.db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND query LIKE '%api_key_changed%'`,
        [database.name],
      );
      if (rows[0].n >= 2 || Date.now() > deadline) break;
      await sleep(50);
    }
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database.drop();
  });

  it('booted both instances on a fresh database: the migrations ran once and there is one administrator', async () => {
    const migrations = await a.db.query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    expect(migrations.rows.length).toBeGreaterThan(0);
    expect(migrations.rows.every((row: { n: number }) => row.n === 1)).toBe(true);
    const admins = await a.db.query('SELECT count(*)::int AS n FROM users WHERE is_admin');
    expect(admins.rows[0].n).toBe(1);
    expect(bootLog.length).toBeGreaterThan(0); // the capture works
    // (The admin race is expected and handled: one instance's INSERT fails and it promotes instead.)
    expect(bootLog.filter((line) => /migration[^"]*fail|retrying|unable to connect/i.test(line))).toEqual([]);
  });

  it('has both instances listening for key changes', async () => {
    // The LISTEN connections open beside the boot, not before it: on a loaded machine allow a moment.
    let listening = 0;
    for (let attempt = 0; attempt < 50 && listening < 2; attempt++) {
      if (attempt > 0) await sleep(100);
      const { rows } = await a.db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND query LIKE '%api_key_changed%'`,
        [database.name],
      );
      listening = rows[0].n;
    }
    expect(listening).toBeGreaterThanOrEqual(2);
  });

  it('shares keys: one created on A authenticates on B, and B’s list shows it', async () => {
    const { id, key } = await createKey(a, owner, 'shared');
    expect(await keyWorks(b, key)).toBe(true);
    const listed = (await b.http().get(KEYS).set(owner.auth).expect(200)).body as { id: string }[];
    expect(listed.map((entry) => entry.id)).toContain(id);
  });

  it.each([
    ['POST revoke', (id: string) => a.http().post(`${KEYS}${id}/revoke/`).set(owner.auth).expect(200)],
    ['DELETE', (id: string) => a.http().delete(`${KEYS}${id}/`).set(owner.auth).expect(204)],
    ['rotation', (id: string) => a.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).expect(201)],
  ])('a %s on A rejects the key on B within 1 s', async (_, change) => {
    const { id, key } = await createKey(a, owner, 'watched');
    // B verifies the key a few times, so it is cached there.
    for (let i = 0; i < 3; i++) expect(await keyWorks(b, key)).toBe(true);
    await change(id);
    const changedAt = Date.now();
    expect(await keyWorks(a, key)).toBe(false); // at once on the instance that made the change
    expect(await msUntilRefused(b, key, changedAt)).toBeLessThan(1000);
  });

  it('an expiry set on A rejects the key on B within 1 s of that expiry', async () => {
    const { id, key } = await createKey(a, owner, 'expiring elsewhere');
    for (let i = 0; i < 3; i++) expect(await keyWorks(b, key)).toBe(true);
    const expiresAt = fromNow(3000);
    await a.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: expiresAt }).expect(200);
    await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()));
    expect(await msUntilRefused(b, key, Date.parse(expiresAt))).toBeLessThan(1000);
  });

  it('a rotation grace period set on A ends on B too', async () => {
    const { id, key } = await createKey(a, owner, 'graceful elsewhere');
    expect(await keyWorks(b, key)).toBe(true);
    await a.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).send({ grace_period_seconds: 2 }).expect(201);
    const rotatedAt = Date.now();
    expect(await keyWorks(b, key)).toBe(true); // still inside the grace period
    await sleep(Math.max(0, rotatedAt + 2000 - Date.now()));
    expect(await msUntilRefused(b, key, rotatedAt + 2000)).toBeLessThan(1000);
  });

  it('a revocation on B during A’s grace period ends it on A within 1 s', async () => {
    const { id, key } = await createKey(a, owner, 'grace revoked elsewhere');
    await a.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).send({ grace_period_seconds: 3600 }).expect(201);
    expect(await keyWorks(a, key)).toBe(true);
    await b.http().post(`${KEYS}${id}/revoke/`).set(owner.auth).expect(200);
    expect(await msUntilRefused(a, key, Date.now())).toBeLessThan(1000);
  });

  it('sign-out everywhere on A refuses the earlier access tokens on B within 1 s, as a key revocation', async () => {
    const user = await signUp(a);
    const second = await signIn(a, user.email, user.password);
    // B verifies both sessions' access tokens, so the account (with its cut-off) is cached there.
    for (const session of [user, second]) await b.http().get('/auth/users/me/').set(session.auth).expect(200);
    const sentAt = Date.now();
    await a.http().post('/auth/jwt/logout/').send({ refresh: user.refresh, all: true }).expect(204);
    const answeredAt = Date.now();
    await a.http().get('/auth/users/me/').set(second.auth).expect(401); // at once where it was made
    const refusedAfter = await msUntilStatus(b, second.auth, 401, answeredAt);
    expect(refusedAfter).toBeLessThan(1000);
    // The answer itself waits out the cut-off's second (at most 1 s): within 2 s of the click, everywhere.
    expect(answeredAt + refusedAfter - sentAt).toBeLessThan(2000);
    await b.http().post('/auth/jwt/refresh/').send({ refresh: second.refresh }).expect(401);
  });

  it('keeps each instance on its own database and cache after another instance in the process closes', async () => {
    const extra = await startTestApp({}, database);
    const { key } = await createKey(extra, owner, 'made on the extra instance');
    await extra.close();
    expect(await keyWorks(a, key)).toBe(true);
    expect(await keyWorks(b, key)).toBe(true);
    await a.http().get('/auth/users/me/').set(owner.auth).expect(200);
    await b.http().get('/auth/users/me/').set(owner.auth).expect(200);
  });
});
