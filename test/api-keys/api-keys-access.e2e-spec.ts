import { createKey, type SignedInUser, type TestApp } from '../support/app.js';
import { countKeys, KEYS, startWithAliceAndBob } from '../support/api-keys.js';
import { API_KEY_MESSAGE, expectNoStoredChange, keyWorks, madeUpKey, notFound } from '../support/core.js';

describe('API keys: whose keys, which credentials manage them, which keys authenticate', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  describe('keys that are not the caller’s', () => {
    const unknownId = '7f1d1c8e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
    const actions: [string, (id: string, user: SignedInUser) => Promise<{ status: number; body: unknown }>][] = [
      ['update', (id, user) => test.http().patch(`${KEYS}${id}/update/`).set(user.auth).send({ expires_at: null })],
      ['rotate', (id, user) => test.http().post(`${KEYS}${id}/rotate/`).set(user.auth)],
      ['revoke', (id, user) => test.http().post(`${KEYS}${id}/revoke/`).set(user.auth)],
      ['delete', (id, user) => test.http().delete(`${KEYS}${id}/`).set(user.auth)],
    ];

    it.each(actions)('%s of another user’s key is a 404 and changes nothing', async (_, act) => {
      const bobs = await createKey(test, bob, 'bob’s own');
      await expectNoStoredChange(test, async () => {
        const response = await act(bobs.id, alice);
        // Word for word what an id that never existed gets: nothing says the key is someone else's.
        expect({ status: response.status, body: response.body }).toEqual({
          status: 404,
          body: notFound('API key', bobs.id),
        });
      });
      expect(await keyWorks(test, bobs.key)).toBe(true);
    });

    it.each(actions)('%s of an unknown id is a 404', async (_, act) => {
      const response = await act(unknownId, alice);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 404,
        body: notFound('API key', unknownId),
      });
    });

    it.each(actions)('%s with a malformed id is a 404, never a 500', async (_, act) => {
      await expectNoStoredChange(test, async () => {
        for (const id of ['not-a-uuid', '1', "1' OR '1'='1", '7f1d1c8e2a4b4c6d8e9f0a1b2c3d4e5f0', '%00']) {
          const response = await act(encodeURIComponent(id), alice);
          expect({ id, status: response.status, body: response.body }).toEqual({
            id,
            status: 404,
            body: { detail: `API key ${JSON.stringify(id)} not found.` },
          });
        }
      });
    });

    it('an upper-case id names the same key', async () => {
      const { id } = await createKey(test, alice, 'case');
      const response = await test.http().post(`${KEYS}${id.toUpperCase()}/revoke/`).set(alice.auth).expect(200);
      expect(response.body.id).toBe(id);
    });
  });

  describe('management accepts only a JWT access token', () => {
    let key: string;
    let keyId: string;
    beforeAll(async () => {
      ({ key, id: keyId } = await createKey(test, alice, 'management attempt'));
    });

    const endpoints: [
      string,
      (auth: Record<string, string>) => Promise<{ status: number; body: { detail?: string } }>,
    ][] = [
      ['list', (auth) => test.http().get(KEYS).set(auth)],
      ['create', (auth) => test.http().post(KEYS).set(auth).send({ name: 'made by a key' })],
      ['update', (auth) => test.http().patch(`${KEYS}${keyId}/update/`).set(auth).send({ expires_at: null })],
      ['rotate', (auth) => test.http().post(`${KEYS}${keyId}/rotate/`).set(auth)],
      ['revoke', (auth) => test.http().post(`${KEYS}${keyId}/revoke/`).set(auth)],
      ['delete', (auth) => test.http().delete(`${KEYS}${keyId}/`).set(auth)],
    ];

    it.each(endpoints)('%s refuses an API key in either header with 401 and changes nothing', async (_, call) => {
      await expectNoStoredChange(test, async () => {
        for (const auth of [{ Authorization: `Bearer ${key}` }, { 'X-API-Key': key }] as Record<string, string>[]) {
          const response = await call(auth);
          expect(response.status).toBe(401);
          expect(typeof response.body.detail).toBe('string');
        }
      });
      expect(await keyWorks(test, key)).toBe(true);
    });

    it.each(endpoints)('%s refuses a refresh token with the JWT error shape', async (_, call) => {
      await expectNoStoredChange(test, async () => {
        const response = await call({ Authorization: `Bearer ${alice.refresh}` });
        expect(response.status).toBe(401);
        expect(response.body).toMatchObject({ code: 'token_not_valid' });
      });
    });

    it.each(endpoints)('%s without credentials is 401', async (_, call) => {
      const response = await call({});
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: 'Authentication credentials were not provided.' });
    });
  });

  describe('keys that do not authenticate', () => {
    it('refuses made-up, mistyped and truncated keys with the API-key message, in either header', async () => {
      const { key } = await createKey(test, alice, 'real');
      const mistyped = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
      for (const candidate of [
        madeUpKey('z'),
        mistyped,
        key.slice(0, -1),
        `${key}x`,
        'svc_',
        'svc_short',
        `svc_${key.slice(4).toUpperCase()}`,
      ]) {
        expect(await keyWorks(test, candidate)).toBe(false);
        expect(await keyWorks(test, candidate, 'x-api-key')).toBe(false);
      }
    });

    it('refuses an API-key header value that is not a key with the API-key message', async () => {
      const response = await test.http().get('/auth/users/me/').set('X-API-Key', alice.access).expect(401);
      expect(response.body).toEqual({ detail: API_KEY_MESSAGE });
    });

    it('counts nothing against the store: refused keys leave every row as it was', async () => {
      const { id, key } = await createKey(test, alice, 'rotated for state check');
      await test.http().post(`${KEYS}${id}/rotate/`).set(alice.auth).expect(201);
      const before = await countKeys(test.db);
      await expectNoStoredChange(test, async () => {
        expect(await keyWorks(test, key)).toBe(false);
        expect(await keyWorks(test, madeUpKey('q'))).toBe(false);
      });
      expect(await countKeys(test.db)).toBe(before);
    });
  });
});
