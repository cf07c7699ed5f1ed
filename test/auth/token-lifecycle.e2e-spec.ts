import { RefreshTokenPurger } from '../../src/auth/refresh-token-purger.js';
import { ADMIN, signIn, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { BAD_CREDENTIALS, decodeClaims, JWT_INVALID, REFRESH_INVALID } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deref, mismatches, type OpenApiDocument } from '../support/openapi.js';

const ME = '/auth/users/me/';
const REGION = () => ({ name: 'Attacker land', slug: `attacker-${Date.now()}` });

const refresh = (test: TestApp, token: string) => test.http().post('/auth/jwt/refresh/').send({ refresh: token });

describe('ADMIN_EMAIL naming an account that already exists', () => {
  let database: TestDatabase;
  const victimEmail = `future-admin-${Date.now()}@example.com`;
  const adminPassword = 'the operator chose this one';
  let squatter: SignedInUser;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Someone signs up with the address before the operator puts it in ADMIN_EMAIL.
    const first = await startTestApp({}, database);
    try {
      squatter = await signUp(first, victimEmail);
    } finally {
      await first.close();
    }
  });
  afterAll(() => database.drop());

  it('does not promote it at boot without ADMIN_PROMOTE_EXISTING, says so in the log, and keeps its password', async () => {
    const lines: string[] = [];
    const test = await startTestApp({ ADMIN_EMAIL: victimEmail, ADMIN_PASSWORD: adminPassword }, database, {
      logger: false,
      logStream: { write: (line: string) => void lines.push(line) },
    });
    try {
      // The squatter's refreshed session is still an ordinary one: no admin operation.
      const access = (await refresh(test, squatter.refresh).expect(200)).body.access as string;
      const auth = { Authorization: `Bearer ${access}` };
      expect((await test.http().get(ME).set(auth).expect(200)).body.is_admin).toBe(false);
      await test.http().post('/v1/regions/').set(auth).send(REGION()).expect(403);
      // ADMIN_PASSWORD was not set on the account.
      expect(
        (await test.http().post('/auth/jwt/create/').send({ email: victimEmail, password: adminPassword }).expect(401))
          .body,
      ).toEqual(BAD_CREDENTIALS);
      const { rows } = await test.db.query('SELECT is_admin FROM users WHERE email = $1', [victimEmail]);
      expect(rows).toEqual([{ is_admin: false }]);
      const refusal = lines
        .map((line) => JSON.parse(line) as { level: string; message?: string })
        .find((entry) => entry.message?.includes('ADMIN_PROMOTE_EXISTING'));
      expect(refusal?.level).toBe('error');
      expect(refusal?.message).toContain(
        `${victimEmail} already exists as an ordinary account and was not made an administrator`,
      );
    } finally {
      await test.close();
    }
  });

  it('promotes it with ADMIN_PROMOTE_EXISTING=true and ends every session it had', async () => {
    const test = await startTestApp(
      { ADMIN_EMAIL: victimEmail, ADMIN_PASSWORD: adminPassword, ADMIN_PROMOTE_EXISTING: 'true' },
      database,
    );
    try {
      // The old refresh token and access token are dead: whoever held them gets nothing.
      expect((await refresh(test, squatter.refresh).expect(401)).body).toEqual(REFRESH_INVALID);
      expect((await test.http().get(ME).set(squatter.auth).expect(401)).body).toEqual(JWT_INVALID);
      // The operator's password is the account's now.
      expect(
        (
          await test
            .http()
            .post('/auth/jwt/create/')
            .send({ email: victimEmail, password: squatter.password })
            .expect(401)
        ).body,
      ).toEqual(BAD_CREDENTIALS);
      const admin = await signIn(test, victimEmail, adminPassword);
      expect((await test.http().get(ME).set(admin.auth).expect(200)).body.is_admin).toBe(true);
      await test.http().post('/v1/regions/').set(admin.auth).send(REGION()).expect(201);
    } finally {
      await test.close();
    }
  });

  it("ends the administrator's sessions when a boot sets a new ADMIN_PASSWORD, and keeps them when it is unchanged", async () => {
    let session: SignedInUser;
    const same = await startTestApp({ ADMIN_EMAIL: victimEmail, ADMIN_PASSWORD: adminPassword }, database);
    try {
      session = await signIn(same, victimEmail, adminPassword);
    } finally {
      await same.close();
    }
    const again = await startTestApp({ ADMIN_EMAIL: victimEmail, ADMIN_PASSWORD: adminPassword }, database);
    try {
      await refresh(again, session.refresh).expect(200);
    } finally {
      await again.close();
    }
    const changed = await startTestApp(
      { ADMIN_EMAIL: victimEmail, ADMIN_PASSWORD: 'a rotated admin password' },
      database,
    );
    try {
      expect((await refresh(changed, session.refresh).expect(401)).body).toEqual(REFRESH_INVALID);
      expect((await changed.http().get(ME).set(session.auth).expect(401)).body).toEqual(JWT_INVALID);
      await signIn(changed, victimEmail, 'a rotated admin password');
    } finally {
      await changed.close();
    }
  });
});

describe('refresh-token rotation (JWT_ROTATE_REFRESH_TOKENS=true)', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({ JWT_ROTATE_REFRESH_TOKENS: 'true' });
  });
  afterAll(() => test.close());

  it('answers a new refresh token beside the access token, in the same family, and spends the old one', async () => {
    const user = await signUp(test);
    const response = await refresh(test, user.refresh).expect(200);
    expect(Object.keys(response.body).sort()).toEqual(['access', 'refresh']);
    expect(response.headers['cache-control']).toBe('no-store');
    const next = decodeClaims(response.body.refresh);
    expect(next).toMatchObject({ token_type: 'refresh', user_id: decodeClaims(user.refresh).user_id });
    expect((next.exp as number) - (next.iat as number)).toBe(2_592_000);
    await test.http().get(ME).set('Authorization', `Bearer ${response.body.access}`).expect(200);
    const { rows } = await test.db.query(
      'SELECT jti, family_id, replaced_by, revoked_at FROM refresh_tokens WHERE family_id = $1 ORDER BY created_at',
      [decodeClaims(user.refresh).jti],
    );
    expect(rows).toEqual([
      {
        jti: decodeClaims(user.refresh).jti,
        family_id: decodeClaims(user.refresh).jti,
        replaced_by: next.jti,
        revoked_at: expect.any(Date),
      },
      { jti: next.jti, family_id: decodeClaims(user.refresh).jti, replaced_by: null, revoked_at: null },
    ]);
    // The successor rotates in turn.
    await refresh(test, response.body.refresh).expect(200);
  });

  it('revokes the whole family when a rotated-away token is presented again, and only that family', async () => {
    const user = await signUp(test);
    const otherDevice = await signIn(test, user.email, user.password);
    const stolen = user.refresh;
    const legitimate = (await refresh(test, stolen).expect(200)).body.refresh as string;
    const descendant = (await refresh(test, legitimate).expect(200)).body.refresh as string;

    // The thief replays the old token: 401, verbatim, and every token of that sign-in dies with it.
    expect((await refresh(test, stolen).expect(401)).body).toEqual(REFRESH_INVALID);
    expect((await refresh(test, descendant).expect(401)).body).toEqual(REFRESH_INVALID);
    expect((await test.http().post('/auth/jwt/verify/').send({ token: descendant }).expect(401)).body).toEqual(
      REFRESH_INVALID,
    );
    // Another sign-in of the same user is untouched.
    await refresh(test, otherDevice.refresh).expect(200);
  });

  it('lets one of several simultaneous refreshes with one token win, and treats the rest as reuse', async () => {
    const user = await signUp(test);
    const responses = await Promise.all(Array.from({ length: 5 }, () => refresh(test, user.refresh)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401]);
    const winner = responses.find((response) => response.status === 200)!.body.refresh as string;
    await refresh(test, winner).expect(401);
  });

  it('answers as its OpenAPI document says, the rotated refresh token included', async () => {
    const document = (await test.http().get('/openapi.json').expect(200)).body as OpenApiDocument;
    const operation = (path: string) => document.paths[path].post;
    const ok = deref(document, operation('/auth/jwt/refresh/').responses['200']).content!['application/json'].schema;
    const user = await signUp(test);
    const rotated = await refresh(test, user.refresh).expect(200);
    expect(mismatches(document, ok, rotated.body)).toEqual([]);
    for (const path of [
      '/auth/users/',
      '/auth/jwt/create/',
      '/auth/jwt/refresh/',
      '/auth/jwt/verify/',
      '/auth/jwt/logout/',
    ]) {
      expect({ path, codes: Object.keys(operation(path).responses) }).toEqual({
        path,
        codes: expect.arrayContaining(['429']),
      });
    }
    const logoutBody = deref(document, operation('/auth/jwt/logout/').requestBody!.content['application/json'].schema!);
    expect(logoutBody.properties?.all).toMatchObject({ type: 'boolean' });
    expect(logoutBody.required).toEqual(['refresh']);
  });

  it('refuses to rotate a token that was signed out', async () => {
    const user = await signUp(test);
    await test.http().post('/auth/jwt/logout/').send({ refresh: user.refresh }).expect(204);
    expect((await refresh(test, user.refresh).expect(401)).body).toEqual(REFRESH_INVALID);
  });
});

describe('without rotation (the default)', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  it('keeps the published answer: only an access token, and the refresh token stays usable', async () => {
    const user = await signUp(test);
    for (let i = 0; i < 3; i++)
      expect(Object.keys((await refresh(test, user.refresh).expect(200)).body)).toEqual(['access']);
  });

  describe('POST /auth/jwt/logout/ with "all": true', () => {
    it('signs out everywhere: every refresh token revoked, earlier access tokens refused, 204', async () => {
      const user = await signUp(test);
      const laptop = await signIn(test, user.email, user.password);
      const other = await signUp(test);
      const response = await test
        .http()
        .post('/auth/jwt/logout/')
        .send({ refresh: user.refresh, all: true })
        .expect(204);
      expect(response.text).toBe('');
      for (const token of [user.refresh, laptop.refresh])
        expect((await refresh(test, token).expect(401)).body).toEqual(REFRESH_INVALID);
      for (const session of [user, laptop])
        expect((await test.http().get(ME).set(session.auth).expect(401)).body).toEqual(JWT_INVALID);
      const { rows } = await test.db.query(
        'SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL',
        [user.id],
      );
      expect(rows[0].n).toBe(0);
      // A new sign-in works at once; another user is untouched.
      const again = await signIn(test, user.email, user.password);
      await test.http().get(ME).set(again.auth).expect(200);
      await test.http().get(ME).set(other.auth).expect(200);
      await refresh(test, other.refresh).expect(200);
    });

    it('with "all": false revokes only the token sent', async () => {
      const user = await signUp(test);
      const laptop = await signIn(test, user.email, user.password);
      await test.http().post('/auth/jwt/logout/').send({ refresh: user.refresh, all: false }).expect(204);
      await refresh(test, user.refresh).expect(401);
      await refresh(test, laptop.refresh).expect(200);
      await test.http().get(ME).set(user.auth).expect(200);
    });

    it('refuses an access token in place of the refresh token and signs nobody out', async () => {
      const user = await signUp(test);
      expect(
        (await test.http().post('/auth/jwt/logout/').send({ refresh: user.access, all: true }).expect(401)).body,
      ).toEqual(REFRESH_INVALID);
      await refresh(test, user.refresh).expect(200);
    });
  });

  describe('wrong types in the body', () => {
    it.each([
      ['/auth/jwt/refresh/', { refresh: 42 }, 'refresh', 'Not a valid string.'],
      ['/auth/jwt/refresh/', { refresh: null }, 'refresh', 'This field is required.'],
      ['/auth/jwt/refresh/', { refresh: ['a.b.c'] }, 'refresh', 'Not a valid string.'],
      ['/auth/jwt/refresh/', { refresh: { token: 'x' } }, 'refresh', 'Not a valid string.'],
      ['/auth/jwt/logout/', { refresh: 42, all: true }, 'refresh', 'Not a valid string.'],
      ['/auth/jwt/logout/', { refresh: 'x.y.z', all: 'yes' }, 'all', 'Must be a valid boolean.'],
      ['/auth/jwt/logout/', { refresh: 'x.y.z', all: 1 }, 'all', 'Must be a valid boolean.'],
      ['/auth/jwt/logout/', { all: true }, 'refresh', 'This field is required.'],
    ])('POST %s %j is a 400 naming the field', async (path, body, field, message) => {
      const response = await test.http().post(path).send(body).expect(400);
      expect(response.body).toEqual({ detail: `${field}: ${message}`, fields: { [field]: [message] } });
    });

    it('answers a JSON array or a bare string body with a 400, never a 500', async () => {
      for (const path of ['/auth/jwt/refresh/', '/auth/jwt/logout/']) {
        for (const body of ['["a"]', '"token"', '42', 'null']) {
          const response = await test.http().post(path).set('Content-Type', 'application/json').send(body);
          expect({ path, body, status: response.status }).toEqual({ path, body, status: 400 });
          expect(typeof response.body.detail).toBe('string');
        }
      }
    });
  });

  describe('expired refresh-token rows', () => {
    it('are deleted by the purge, in bounded batches; live and revoked-but-unexpired rows stay', async () => {
      const user = await signUp(test);
      await test.db.query(
        `INSERT INTO refresh_tokens (jti, user_id, family_id, expires_at)
         SELECT id, $1, id, now() - interval '1 day' FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, 1500)) g`,
        [user.id],
      );
      await test
        .http()
        .post('/auth/jwt/logout/')
        .send({ refresh: (await signIn(test, user.email, user.password)).refresh })
        .expect(204);
      const count = async (where: string) =>
        (
          await test.db.query(`SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = $1 AND ${where}`, [
            user.id,
          ])
        ).rows[0].n as number;
      expect(await count('expires_at < now()')).toBe(1500);
      const live = await count('expires_at > now()');

      expect(await test.app.get(RefreshTokenPurger).purgeExpired()).toBeGreaterThanOrEqual(1500);
      expect(await count('expires_at < now()')).toBe(0);
      expect(await count('expires_at > now()')).toBe(live);
      await refresh(test, user.refresh).expect(200);
    });
  });
});

describe('the administrator of the test set-up', () => {
  it('still exists and signs in (ADMIN_EMAIL on a fresh database creates it)', async () => {
    const test = await startTestApp();
    try {
      const admin = await signIn(test, ADMIN.email, ADMIN.password);
      expect((await test.http().get(ME).set(admin.auth).expect(200)).body.is_admin).toBe(true);
    } finally {
      await test.close();
    }
  });
});
