import {
  ADMIN,
  createKey,
  signIn,
  signUp,
  startTestApp,
  TEST_JWT_SECRET,
  type SignedInUser,
  type TestApp,
} from '../support/app.js';
import {
  BAD_CREDENTIALS,
  decodeClaims,
  decodeHeader,
  expectNoStoredChange,
  JWT_INVALID,
  NOT_PROVIDED,
  REFRESH_INVALID,
  signToken,
  tamperSignature,
  unsignedToken,
  UUID,
  WWW_AUTHENTICATE,
} from '../support/core.js';

describe('accounts and JWT', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test, 'alice@example.com');
  });
  afterAll(() => test.close());

  describe('registration', () => {
    it('creates the user with an argon2id hash and an organization the user owns', async () => {
      const password = 'a long enough password';
      const response = await test.http().post('/auth/users/').send({ email: 'Bob@Example.COM', password }).expect(201);
      expect(response.body).toEqual({ id: expect.stringMatching(UUID), email: 'bob@example.com' });

      const { rows } = await test.db.query(
        `SELECT u.*, o.owner_id FROM users u JOIN organizations o ON o.id = u.organization_id WHERE u.id = $1`,
        [response.body.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].email).toBe('bob@example.com');
      expect(rows[0].is_admin).toBe(false);
      expect(rows[0].owner_id).toBe(response.body.id);
      expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);
      expect(rows[0].password_hash).not.toContain(password);
      // The address is case-insensitive for sign-in too.
      await test.http().post('/auth/jwt/create/').send({ email: 'BOB@example.com', password }).expect(200);
    });

    it('refuses an address that is already registered, whatever its case, and stores nothing', async () => {
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          .post('/auth/users/')
          .send({ email: 'ALICE@example.com', password: 'another password' })
          .expect(400);
        expect(response.body).toEqual({
          detail: 'email: A user with that email already exists.',
          fields: { email: ['A user with that email already exists.'] },
        });
      });
    });

    it('lets exactly one of several simultaneous sign-ups for one address through', async () => {
      const body = { email: 'racer@example.com', password: 'a long enough password' };
      const responses = await Promise.all(Array.from({ length: 5 }, () => test.http().post('/auth/users/').send(body)));
      expect(responses.map((response) => response.status).sort()).toEqual([201, 400, 400, 400, 400]);
      for (const response of responses.filter((r) => r.status === 400)) {
        expect(response.body.detail).toBe('email: A user with that email already exists.');
      }
      const { rows } = await test.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [body.email]);
      expect(rows[0].n).toBe(1);
      const organizations = await test.db.query(
        'SELECT count(*)::int AS n FROM organizations o JOIN users u ON u.id = o.owner_id WHERE u.email = $1',
        [body.email],
      );
      expect(organizations.rows[0].n).toBe(1);
    });

    it.each([
      ['under 8 characters', 'short1!', 'password: This password is too short. It must contain at least 8 characters.'],
      ['all digits', '1234567890', 'password: This password is entirely numeric.'],
      ['blank', '        ', 'password: This field is required.'],
    ])('refuses a weak password (%s) with 400 naming the field', async (_, password, detail) => {
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          .post('/auth/users/')
          .send({ email: 'weak@example.com', password })
          .expect(400);
        expect(response.body.detail).toBe(detail);
        expect(Object.keys(response.body.fields)).toEqual(['password']);
      });
    });

    it.each([
      [{ password: 'long enough pass' }, 'email: This field is required.'],
      [{ email: 'x@example.com' }, 'password: This field is required.'],
      [{ email: 42, password: 'long enough pass' }, 'email: Not a valid string.'],
      [{ email: 'x@example.com', password: ['long enough pass'] }, 'password: Not a valid string.'],
      [{ email: 'not-an-address', password: 'long enough pass' }, 'email: Enter a valid email address.'],
      [{ email: '   ', password: 'long enough pass' }, 'email: This field is required.'],
    ])('refuses %j with 400 naming the bad field', async (body, detail) => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post('/auth/users/').send(body).expect(400);
        expect(response.body.detail).toBe(detail);
        expect(response.body.fields[detail.split(':')[0]]).toEqual([detail.slice(detail.indexOf(': ') + 2)]);
      });
    });

    it('is closed when ALLOW_SIGNUP=false, and nothing is stored', async () => {
      const closed = await startTestApp({ ALLOW_SIGNUP: 'false' });
      try {
        const before = (await closed.db.query('SELECT count(*)::int AS n FROM users')).rows[0].n;
        const response = await closed
          .http()
          .post('/auth/users/')
          .send({ email: 'new@example.com', password: 'long enough pass' })
          .expect(403);
        expect(response.body).toEqual({ detail: 'You do not have permission to perform this action.' });
        expect((await closed.db.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(before);
        // The configured administrator can still sign in.
        await closed.http().post('/auth/jwt/create/').send(ADMIN).expect(200);
      } finally {
        await closed.close();
      }
    });
  });

  describe('the current user', () => {
    it('returns id, email, is_admin, organization_id, and (teams) role and organizations for a JWT', async () => {
      const response = await test.http().get('/auth/users/me/').set(alice.auth).expect(200);
      const { rows } = await test.db.query('SELECT id, organization_id FROM users WHERE email = $1', [
        'alice@example.com',
      ]);
      expect(response.body).toEqual({
        id: rows[0].id,
        email: 'alice@example.com',
        is_admin: false,
        organization_id: rows[0].organization_id,
        role: 'owner',
        organizations: [{ id: rows[0].organization_id, name: "alice's organization", role: 'owner' }],
      });
    });

    it('returns the key owner for an API key, in either header', async () => {
      const { key } = await createKey(test, alice);
      const bearer = await test.http().get('/auth/users/me/').set('Authorization', `Bearer ${key}`).expect(200);
      const header = await test.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
      expect(bearer.body.email).toBe('alice@example.com');
      expect(header.body).toEqual(bearer.body);
    });

    it('answers without the trailing slash too', async () => {
      const response = await test.http().get('/auth/users/me').set(alice.auth).expect(200);
      expect(response.body.email).toBe('alice@example.com');
    });
  });

  describe('POST /auth/jwt/create/', () => {
    it('issues an HS256 access token for 30 minutes and a refresh token for 30 days, with the contract claims', async () => {
      const response = await test
        .http()
        .post('/auth/jwt/create/')
        .send({ email: alice.email, password: alice.password })
        .expect(200);
      expect(Object.keys(response.body).sort()).toEqual(['access', 'refresh']);
      const access = decodeClaims(response.body.access);
      const refresh = decodeClaims(response.body.refresh);
      const { rows } = await test.db.query('SELECT id FROM users WHERE email = $1', [alice.email]);
      for (const [token, claims, type, lifetime] of [
        [response.body.access, access, 'access', 1800],
        [response.body.refresh, refresh, 'refresh', 2_592_000],
      ] as const) {
        expect(decodeHeader(token)).toMatchObject({ alg: 'HS256' });
        expect(claims).toMatchObject({ token_type: type, user_id: rows[0].id, jti: expect.stringMatching(UUID) });
        expect((claims.exp as number) - (claims.iat as number)).toBe(lifetime);
        expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(10);
      }
      expect(access.jti).not.toBe(refresh.jti);
      // The refresh token is recorded, so that logout can revoke it.
      const stored = await test.db.query('SELECT user_id, revoked_at FROM refresh_tokens WHERE jti = $1', [
        refresh.jti,
      ]);
      expect(stored.rows).toEqual([{ user_id: rows[0].id, revoked_at: null }]);
    });

    it('answers a wrong password and an unknown e-mail with the same 401, verbatim', async () => {
      await expectNoStoredChange(test, async () => {
        const wrong = await test
          .http()
          .post('/auth/jwt/create/')
          .send({ email: alice.email, password: 'not the password' })
          .expect(401);
        const unknown = await test
          .http()
          .post('/auth/jwt/create/')
          .send({ email: 'nobody@example.com', password: 'not the password' })
          .expect(401);
        expect(wrong.body).toEqual(BAD_CREDENTIALS);
        expect(unknown.body).toEqual(BAD_CREDENTIALS);
      });
    });

    it('refuses a missing or wrong-typed field with 400 naming it', async () => {
      await expectNoStoredChange(test, async () => {
        const missing = await test.http().post('/auth/jwt/create/').send({ email: alice.email }).expect(400);
        expect(missing.body).toEqual({
          detail: 'password: This field is required.',
          fields: { password: ['This field is required.'] },
        });
        const wrongType = await test
          .http()
          .post('/auth/jwt/create/')
          .send({ email: alice.email, password: 12345678 })
          .expect(400);
        expect(wrongType.body.detail).toBe('password: Not a valid string.');
      });
    });

    it('answers without the trailing slash too', async () => {
      await test.http().post('/auth/jwt/create').send({ email: alice.email, password: alice.password }).expect(200);
    });
  });

  describe('POST /auth/jwt/refresh/', () => {
    it('returns only a new access token, which authenticates', async () => {
      const response = await test.http().post('/auth/jwt/refresh/').send({ refresh: alice.refresh }).expect(200);
      expect(Object.keys(response.body)).toEqual(['access']);
      expect(decodeClaims(response.body.access)).toMatchObject({ token_type: 'access' });
      await test.http().get('/auth/users/me/').set('Authorization', `Bearer ${response.body.access}`).expect(200);
    });

    it('refuses an access token with the refresh 401 body, verbatim', async () => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post('/auth/jwt/refresh/').send({ refresh: alice.access }).expect(401);
        expect(response.body).toEqual(REFRESH_INVALID);
      });
    });

    it('refuses an expired, tampered, unsigned or foreign-signed refresh token', async () => {
      const claims = decodeClaims(alice.refresh);
      const past = Math.floor(Date.now() / 1000) - 60;
      const tokens = [
        signToken({ ...claims, iat: past - 100, exp: past }),
        tamperSignature(alice.refresh),
        unsignedToken({ ...claims }),
        signToken({ ...claims }, 'some-other-secret-that-is-32-bytes-long!!'),
        'not a token at all',
      ];
      await expectNoStoredChange(test, async () => {
        for (const refresh of tokens) {
          const response = await test.http().post('/auth/jwt/refresh/').send({ refresh });
          expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: REFRESH_INVALID });
        }
      });
    });

    it('refuses a well-signed refresh token that was never issued (no record)', async () => {
      const forged = signToken({ ...decodeClaims(alice.refresh), jti: '9a9d0d3e-3f43-4f0e-8d3a-6b8f4c0f0f0f' });
      const response = await test.http().post('/auth/jwt/refresh/').send({ refresh: forged }).expect(401);
      expect(response.body).toEqual(REFRESH_INVALID);
    });

    it('refuses a missing refresh field with 400', async () => {
      const response = await test.http().post('/auth/jwt/refresh/').send({}).expect(400);
      expect(response.body.detail).toBe('refresh: This field is required.');
    });
  });

  describe('POST /auth/jwt/verify/', () => {
    it('answers {} for a valid access or refresh token', async () => {
      expect((await test.http().post('/auth/jwt/verify/').send({ token: alice.access }).expect(200)).body).toEqual({});
      expect((await test.http().post('/auth/jwt/verify/').send({ token: alice.refresh }).expect(200)).body).toEqual({});
    });

    it('answers the 401 for an expired, tampered or unsigned token', async () => {
      const past = Math.floor(Date.now() / 1000) - 5;
      const claims = decodeClaims(alice.access);
      for (const token of [
        signToken({ ...claims, iat: past - 60, exp: past }),
        tamperSignature(alice.access),
        unsignedToken(claims),
      ]) {
        const response = await test.http().post('/auth/jwt/verify/').send({ token });
        expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: REFRESH_INVALID });
      }
    });
  });

  describe('POST /auth/jwt/logout/', () => {
    it('revokes the refresh token: 204, recorded, and it can no longer refresh', async () => {
      const session = await signIn(test, alice.email, alice.password);
      const { jti } = decodeClaims(session.refresh);
      const response = await test.http().post('/auth/jwt/logout/').send({ refresh: session.refresh }).expect(204);
      expect(response.text).toBe('');
      const stored = await test.db.query('SELECT revoked_at FROM refresh_tokens WHERE jti = $1', [jti]);
      expect(stored.rows[0].revoked_at).toBeInstanceOf(Date);

      const refresh = await test.http().post('/auth/jwt/refresh/').send({ refresh: session.refresh }).expect(401);
      expect(refresh.body).toEqual(REFRESH_INVALID);
      const verify = await test.http().post('/auth/jwt/verify/').send({ token: session.refresh }).expect(401);
      expect(verify.body).toEqual(REFRESH_INVALID);
      // Other sessions of the same user are untouched.
      await test.http().post('/auth/jwt/refresh/').send({ refresh: alice.refresh }).expect(200);
    });

    it('refuses an access token and changes nothing', async () => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post('/auth/jwt/logout/').send({ refresh: alice.access }).expect(401);
        expect(response.body).toEqual(REFRESH_INVALID);
      });
    });
  });

  describe('credentials on an authenticated route', () => {
    const me = () => test.http().get('/auth/users/me/');

    it('answers no credentials with 401, verbatim, and WWW-Authenticate', async () => {
      const response = await me().expect(401);
      expect(response.body).toEqual(NOT_PROVIDED);
      expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
    });

    it.each([
      ['Basic', 'Basic YWxpY2VAZXhhbXBsZS5jb206cGFzc3dvcmQ='],
      ['Token', 'Token 0123456789abcdef'],
      ['Digest', 'Digest username="alice"'],
    ])('treats an unknown Authorization scheme (%s) as no credentials', async (_, header) => {
      await expectNoStoredChange(test, async () => {
        const response = await me().set('Authorization', header).expect(401);
        expect(response.body).toEqual(NOT_PROVIDED);
        expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
      });
    });

    const badTokens: [string, () => string][] = [
      ['a refresh token', () => alice.refresh],
      ['an unsigned token (alg: none)', () => unsignedToken(decodeClaims(alice.access))],
      ['a token with a tampered signature', () => tamperSignature(alice.access)],
      [
        'a token with a tampered payload',
        () => {
          const [header, , signature] = alice.access.split('.');
          const payload = Buffer.from(
            JSON.stringify({ ...decodeClaims(alice.access), user_id: '00000000-0000-4000-8000-000000000000' }),
          ).toString('base64url');
          return `${header}.${payload}.${signature}`;
        },
      ],
      [
        'an expired access token',
        () => {
          const past = Math.floor(Date.now() / 1000) - 1;
          return signToken({ ...decodeClaims(alice.access), iat: past - 1800, exp: past });
        },
      ],
      [
        'a token signed with another secret',
        () => signToken(decodeClaims(alice.access), `${TEST_JWT_SECRET}-but-not-this-one`),
      ],
      // The right secret but another algorithm: only HS256 is accepted.
      ['a token signed with HS512', () => signToken(decodeClaims(alice.access), TEST_JWT_SECRET, 'HS512')],
      [
        'a well-signed token for a user that does not exist',
        () => signToken({ user_id: '00000000-0000-4000-8000-000000000000' }),
      ],
      [
        'a well-signed token without a token type',
        () => signToken({ ...decodeClaims(alice.access), token_type: undefined }),
      ],
      ['garbage', () => 'garbage'],
    ];

    it.each(badTokens)('refuses %s with the JWT error shape, verbatim', async (_, token) => {
      await expectNoStoredChange(test, async () => {
        const response = await me().set('Authorization', `Bearer ${token()}`).expect(401);
        expect(response.body).toEqual(JWT_INVALID);
        expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
      });
    });

    it('refuses "Bearer" without a token with the JWT error shape', async () => {
      const response = await me().set('Authorization', 'Bearer').expect(401);
      expect(response.body).toEqual(JWT_INVALID);
    });

    it('accepts the scheme name in any case', async () => {
      await me().set('Authorization', `bearer ${alice.access}`).expect(200);
    });

    it('refuses a token that worked before, once it has expired', async () => {
      const soon = Math.floor(Date.now() / 1000) + 4;
      const token = signToken({ ...decodeClaims(alice.access), iat: soon - 1800, exp: soon });
      await me().set('Authorization', `Bearer ${token}`).expect(200);
      await me().set('Authorization', `Bearer ${token}`).expect(200);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, soon * 1000 - Date.now()) + 50));
      const response = await me().set('Authorization', `Bearer ${token}`).expect(401);
      expect(response.body).toEqual(JWT_INVALID);
    });

    it('refuses a token with a tampered signature after the genuine one was accepted', async () => {
      await me().set('Authorization', `Bearer ${alice.access}`).expect(200);
      const response = await me()
        .set('Authorization', `Bearer ${tamperSignature(alice.access)}`)
        .expect(401);
      expect(response.body).toEqual(JWT_INVALID);
    });
  });
});
