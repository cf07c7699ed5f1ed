import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { lastCharacterChanged } from '../support/core.js';
import { CapturedLogs, databaseFingerprint, registeredRoutes } from '../support/ops.js';

/**
 * Tenant isolation over every route with an id, found at run time, and secrets that never come back:
 * no response after creation, no log line and no stored row holds a full key, a password or a token.
 * To cover a new kind of owned resource, add its path parameter to `ownedBy` in beforeAll.
 */
describe('security', () => {
  const logs = new CapturedLogs();
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let bobKey: string;
  /** Path parameter name -> an id that belongs to Alice. */
  const ownedBy: Record<string, string> = {};
  const secrets: string[] = [];

  beforeAll(async () => {
    test = await startTestApp(
      { LOG_LEVEL: 'debug', RATE_LIMIT_PER_MINUTE: '100000', ORG_RATE_LIMIT_PER_MINUTE: '100000' },
      undefined,
      { logStream: logs },
    );
    alice = await signUp(test);
    bob = await signUp(test);
    const aliceKey = await createKey(test, alice, 'alice');
    bobKey = (await createKey(test, bob, 'bob')).key;
    ownedBy.keyId = aliceKey.id;
    ownedBy.organizationId = (await test.http().get('/auth/users/me/').set(alice.auth)).body.organization_id;
    const document = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({ title: 'Alice only', content: 'Private words of Alice.' });
    if (document.status === 201) ownedBy.id = document.body.id;
    const session = await test.http().post('/v1/chat/sessions/').set(alice.auth).send({ title: 'Alice chat' });
    if (session.status === 201) ownedBy.sessionId = session.body.id;
    secrets.push(
      aliceKey.key,
      bobKey,
      alice.password,
      alice.access,
      alice.refresh,
      bob.password,
      bob.access,
      bob.refresh,
    );
  }, 60_000);
  afterAll(() => test.close());

  /**
   * A body each route accepts, so that the answer is about the id (unknown fields are a 400 of their
   * own, before any lookup); routes not listed take an empty body.
   */
  const VALID_BODIES: Record<string, object> = {
    'PATCH /v1/billings/api-keys/:keyId/update': { name: 'x', expires_at: null },
    'PATCH /v1/chat/sessions/:sessionId': { title: 'x' },
    'POST /v1/chat/sessions/:sessionId/messages': { content: 'x' },
    'PATCH /v1/collections/:id': { description: 'x' },
    'POST /v1/vector_stores/:id': { name: 'x' },
    'POST /v1/vector_stores/:id/files': { file_id: '00000000-0000-4000-8000-000000000000' },
    'POST /v1/vector_stores/:id/search': { query: 'x' },
  };

  /** Routes whose every path parameter names something of Alice's (public domains and regions aside). */
  function ownedRoutes() {
    return registeredRoutes(test.app).filter((route) => {
      const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
      return names.length > 0 && names.every((name) => name in ownedBy) && !route.path.startsWith('/v1/domains');
    });
  }

  it('covers the routes with an id that exist today', () => {
    const paths = ownedRoutes().map((route) => `${route.method} ${route.path}`);
    expect(paths).toEqual(
      expect.arrayContaining(['POST /v1/billings/api-keys/:keyId/rotate', 'DELETE /v1/billings/api-keys/:keyId']),
    );
    if (ownedBy.id) expect(paths).toContain('DELETE /v1/documents/:id');
    if (ownedBy.sessionId) expect(paths).toContain('POST /v1/chat/sessions/:sessionId/messages');
    expect(paths.length).toBeGreaterThanOrEqual(5);
  });

  it("answers 404 to another user for every route with one of Alice's ids, and changes nothing", async () => {
    const before = await databaseFingerprint(test.db);
    const answers: string[] = [];
    for (const route of ownedRoutes()) {
      const path = `${route.path.replace(/:(\w+)/g, (_, name: string) => ownedBy[name])}/`;
      for (const [who, headers] of [
        ['Bob (JWT)', bob.auth],
        ['Bob (API key)', { 'X-API-Key': bobKey }],
      ] as const) {
        const response = await test
          .http()
          [route.method.toLowerCase() as 'post'](path)
          .set(headers)
          .send(VALID_BODIES[`${route.method} ${route.path}`] ?? {});
        // 404 hides that the id exists; 401 is an API key on a JWT-only route; 403 an admin-only route.
        if (![404, 401, 403].includes(response.status))
          answers.push(`${who} ${route.method} ${route.path}: ${response.status}`);
        if (response.status === 401 && who === 'Bob (JWT)')
          answers.push(`${who} ${route.method} ${route.path}: 401 with a valid JWT`);
      }
    }
    expect(answers).toEqual([]);
    expect(await databaseFingerprint(test.db)).toBe(before);
  });

  it("never lists Alice's things to Bob, on any list route", async () => {
    const aliceIds = Object.values(ownedBy).filter((id) => id !== ownedBy.organizationId);
    const leaks: string[] = [];
    for (const route of registeredRoutes(test.app).filter((r) => r.method === 'GET' && !r.path.includes(':'))) {
      for (const headers of [bob.auth, { 'X-API-Key': bobKey }]) {
        const response = await test.http().get(`${route.path}/`).set(headers);
        for (const id of aliceIds) if (response.text.includes(id)) leaks.push(`${route.path} shows ${id}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('never shows a full key, password or token again, in any response, log line or stored row', async () => {
    // Exercise what handles secrets: sign-in failures, refresh, verify, key use by both headers,
    // rotation (whose response rightly carries the new key once), bad keys, logout.
    const rotated = await test
      .http()
      .post(`/v1/billings/api-keys/${ownedBy.keyId}/rotate/`)
      .set(alice.auth)
      .send({ grace_period_seconds: 60 });
    expect(rotated.status).toBe(201);
    secrets.push(rotated.body.key);
    await test.http().get('/auth/users/me/').set('X-API-Key', rotated.body.key).expect(200);
    await test.http().get('/auth/users/me/').set('Authorization', `Bearer ${rotated.body.key}`).expect(200);
    await test
      .http()
      .get('/auth/users/me/')
      .set('X-API-Key', lastCharacterChanged(rotated.body.key)) // `…x` was the key itself when it ended in x
      .expect(401);
    await test
      .http()
      .post('/auth/jwt/create/')
      .send({ email: alice.email, password: `${alice.password}!` })
      .expect(401);
    await test.http().post('/auth/jwt/refresh/').send({ refresh: alice.refresh }).expect(200);
    await test.http().post('/auth/jwt/verify/').send({ token: alice.access }).expect(200);
    await test
      .http()
      .post('/auth/jwt/verify/')
      .send({ token: `${alice.access}x` })
      .expect(401);

    const responses: string[] = [];
    for (const route of registeredRoutes(test.app).filter((r) => r.method === 'GET' && !r.path.includes(':'))) {
      for (const headers of [alice.auth, { 'X-API-Key': rotated.body.key }])
        responses.push((await test.http().get(`${route.path}/`).set(headers)).text);
    }
    await test.http().post('/auth/jwt/logout/').send({ refresh: alice.refresh }).expect(204);

    const { rows } = await test.db.query(
      `SELECT string_agg(t, ' ') AS dump FROM (SELECT to_jsonb(x)::text AS t FROM users x UNION ALL SELECT to_jsonb(x)::text FROM api_keys x
         UNION ALL SELECT to_jsonb(x)::text FROM refresh_tokens x) s`,
    );
    const places = { responses: responses.join('\n'), logs: logs.text, database: String(rows[0].dump) };
    const found: string[] = [];
    for (const [place, text] of Object.entries(places)) {
      for (const secret of secrets) if (text.includes(secret)) found.push(`${place} contains ${secret.slice(0, 12)}…`);
    }
    expect(logs.lines.length).toBeGreaterThan(20);
    expect(found).toEqual([]);
  });
});
