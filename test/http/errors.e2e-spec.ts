import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { API_KEY_MESSAGE, expectNoStoredChange, lastCharacterChanged, madeUpKey, NOT_FOUND } from '../support/core.js';

const KEYS = '/v1/billings/api-keys/';

/** No error body may leak internals: a stack frame, SQL, or a driver message. */
function expectNothingInternal(body: unknown): void {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/\bat .+\.(?:ts|js):\d+/);
  expect(text).not.toMatch(/\b(?:SELECT|INSERT|UPDATE|DELETE)\b.+\b(?:FROM|INTO|SET|WHERE)\b/i);
  expect(text).not.toMatch(/relation|syntax error|QueryFailedError|TypeORM|node_modules/i);
}

describe('error responses', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  describe('unknown routes and wrong methods', () => {
    it.each(['/nope', '/nope/', '/v1/', '/v1/billings/', '/v1/billings/api-keys/x/y/z/', '/auth/jwt/'])(
      'answers GET %s with 404 {"detail":"Not found."}',
      async (path) => {
        const response = await test.http().get(path).expect(404);
        expect(response.body).toEqual(NOT_FOUND);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
      },
    );

    it('answers an unknown route with 404 even with credentials and a body', async () => {
      const response = await test.http().post('/v1/unknown/').set(alice.auth).send({ a: 1 }).expect(404);
      expect(response.body).toEqual(NOT_FOUND);
    });

    it.each([
      ['PUT', KEYS, 'GET, HEAD, POST'],
      ['DELETE', KEYS, 'GET, HEAD, POST'],
      ['GET', '/auth/jwt/create/', 'POST'],
      ['PATCH', '/auth/users/', 'POST'],
      ['GET', `${KEYS}7f1d1c8e-2a4b-4c6d-8e9f-0a1b2c3d4e5f/rotate/`, 'POST'],
      ['POST', `${KEYS}7f1d1c8e-2a4b-4c6d-8e9f-0a1b2c3d4e5f/update/`, 'PATCH'],
      ['POST', '/health/', 'GET, HEAD'],
    ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http()[method.toLowerCase() as 'get'](path).set(alice.auth).expect(405);
        expect(response.headers.allow).toBe(allow);
        expect(response.body).toEqual({ detail: `Method "${method}" not allowed.` });
      });
    });

    it('answers a wrong method on a path without its trailing slash with 405 too', async () => {
      const response = await test.http().put('/v1/billings/api-keys').set(alice.auth).expect(405);
      expect(response.headers.allow).toBe('GET, HEAD, POST');
    });
  });

  describe('bodies that cannot be read', () => {
    it.each([
      ['{"name": "x"', KEYS],
      ['{name: "x"}', KEYS],
      ["{'name': 'x'}", KEYS],
      ['{"email": "a@example.com", "password": }', '/auth/jwt/create/'],
      ['{"email": "a@example.com"} trailing', '/auth/users/'],
    ])('answers malformed JSON %j with 400 and stores nothing', async (raw, path) => {
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          .post(path)
          .set(alice.auth)
          .set('Content-Type', 'application/json')
          .send(raw)
          .expect(400);
        expect(response.body).toEqual({ detail: expect.any(String) });
        expectNothingInternal(response.body);
      });
    });

    it('answers a 2 MB body with 413 and stores nothing', async () => {
      const huge = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          .post(KEYS)
          .set(alice.auth)
          .set('Content-Type', 'application/json')
          .send(huge)
          .expect(413);
        expect(response.body).toEqual({ detail: expect.stringMatching(/too large/i) });
      });
    });

    it('answers a 2 MB body with 413 before authentication too', async () => {
      const huge = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2 * 1024 * 1024) });
      const response = await test
        .http()
        .post('/auth/users/')
        .set('Content-Type', 'application/json')
        .send(huge)
        .expect(413);
      expect(response.body).toEqual({ detail: expect.stringMatching(/too large/i) });
    });

    it('reads JSON whatever the Content-Type says, as curl -d sends form-urlencoded', async () => {
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('{"name":"from curl"}')
        .expect(201);
      expect(response.body.name).toBe('from curl');
      await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .set('Content-Type', 'text/plain')
        .send('{"name":"plain"}')
        .expect(201);
    });

    it('answers a body that is not JSON with the malformed-JSON 400 and stores nothing', async () => {
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          .post(KEYS)
          .set(alice.auth)
          .set('Content-Type', 'text/plain')
          .send('name=x')
          .expect(400);
        expect(response.body).toEqual({ detail: 'Malformed JSON in the request body.' });
      });
    });

    it('answers an empty JSON body naming the required field', async () => {
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .set('Content-Type', 'application/json')
        .send('')
        .expect(400);
      expect(response.body.detail).toBe('name: This field is required.');
    });

    it('answers a JSON null body naming the required field', async () => {
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .set('Content-Type', 'application/json')
        .send('null')
        .expect(400);
      expect(response.body.detail).toBe('name: This field is required.');
    });

    it('answers a corrupt gzip body with a plain 400 that quotes nothing of the decoder', async () => {
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .send('not gzip at all')
        .expect(400);
      expect(response.body).toEqual({ detail: 'The request could not be read.' });
    });

    // fetch, not supertest: superagent would JSON-encode a Buffer sent as application/json.
    const postEncoded = async (encoding: string, body: Buffer | string) => {
      const response = await fetch(new URL(KEYS, test.url), {
        method: 'POST',
        headers: { ...alice.auth, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    it('reads a gzip, deflate or brotli JSON body, and refuses an encoding it does not know with 415', async () => {
      for (const [encoding, encode] of [
        ['gzip', gzipSync],
        ['deflate', deflateSync],
        ['br', brotliCompressSync],
      ] as const) {
        const response = await postEncoded(
          encoding,
          encode(Buffer.from(JSON.stringify({ name: `compressed ${encoding}` }))),
        );
        expect(response).toMatchObject({ status: 201, body: { name: `compressed ${encoding}` } });
      }
      expect(await postEncoded('zstd', '{}')).toEqual({
        status: 415,
        body: { detail: 'Unsupported Content-Encoding "zstd": send gzip, deflate, br or none.' },
      });
    });

    it('applies the body limit to the decoded body: a small gzip that inflates past 1 MB is a 413', async () => {
      const bomb = gzipSync(Buffer.from(JSON.stringify({ name: 'x', padding: ' '.repeat(3 * 1024 * 1024) })));
      expect(bomb.length).toBeLessThan(10_000);
      expect(await postEncoded('gzip', bomb)).toEqual({
        status: 413,
        body: { detail: expect.stringMatching(/too large/i) },
      });
    });

    it('answers a path with a broken percent-encoding with 404 or 400, never 500', async () => {
      const response = await test.http().post(`${KEYS}%E0%A4%A/revoke/`).set(alice.auth);
      expect([400, 404]).toContain(response.status);
      expect(response.body).toEqual({ detail: expect.any(String) });
    });
  });

  describe('when the database fails', () => {
    // Renaming the table makes every key query fail, as an outage or a broken migration would.
    beforeAll(() => test.db.query('ALTER TABLE api_keys RENAME TO api_keys_away'));
    afterAll(() => test.db.query('ALTER TABLE api_keys_away RENAME TO api_keys'));

    it('answers 500 with a generic detail and nothing internal', async () => {
      const response = await test.http().get(KEYS).set(alice.auth).expect(500);
      // Issue 4: a 500 names its request id, which is also in the X-Request-Id header and the log.
      expect(Object.keys(response.body)).toEqual(['detail', 'request_id']);
      expect(response.body.request_id).toBe(response.headers['x-request-id']);
      expect(response.body.detail).toMatch(/retry/i);
      expectNothingInternal(response.body);
    });

    it('refuses a key with a wrong checksum without touching the database (401, not 500)', async () => {
      const bad = lastCharacterChanged(madeUpKey('m'));
      const response = await test.http().get('/auth/users/me/').set('X-API-Key', bad).expect(401);
      expect(response.body).toEqual({ detail: API_KEY_MESSAGE });
    });

    it('needs the database for a well-formed key it has never seen (so the test above proves the skip)', async () => {
      const response = await test.http().get('/auth/users/me/').set('X-API-Key', madeUpKey('n')).expect(500);
      expectNothingInternal(response.body);
    });
  });

  it('serves requests normally again once the database is back', async () => {
    const { key } = await createKey(test, alice, 'after the outage');
    await test.http().get('/auth/users/me/').set('X-API-Key', key).expect(200);
  });
});
