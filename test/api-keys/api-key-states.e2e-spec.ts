import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { expectNoStoredChange, fromNow, keyRow, keyWorks, sleep } from '../support/core.js';

const KEYS = '/v1/billings/api-keys/';

/** The spec's table of API-key states (section 3), one describe per row, in its order. */
describe('API key states (spec section 3)', () => {
  let test: TestApp;
  let owner: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    owner = await signUp(test);
  });
  afterAll(() => test.close());

  const listed = async (id: string) =>
    (
      (await test.http().get(KEYS).set(owner.auth).expect(200)).body as {
        id: string;
        is_active: boolean;
        expires_at: string | null;
      }[]
    ).find((key) => key.id === id);

  describe('(none) → POST create with a valid JWT access token → active, expires_at null', () => {
    it('creates an active, non-expiring key and returns the full key once', async () => {
      const created = await createKey(test, owner, 'row 1');
      expect(created).toMatchObject({ is_active: true, expires_at: null, last_used_at: null });
      expect(await keyWorks(test, created.key)).toBe(true);
      const entry = await listed(created.id);
      expect(entry).toMatchObject({ is_active: true, expires_at: null });
      expect(entry).not.toHaveProperty('key');
    });

    it('creates nothing without a valid JWT access token', async () => {
      const { key } = await createKey(test, owner, 'credential for the attempt');
      await expectNoStoredChange(test, async () => {
        for (const auth of [
          {},
          { Authorization: 'Bearer not-a-jwt' },
          { Authorization: `Bearer ${owner.refresh}` },
          { 'X-API-Key': key },
        ]) {
          const response = await test.http().post(KEYS).set(auth).send({ name: 'never' });
          expect(response.status).toBe(401);
        }
      });
    });
  });

  describe('active → PATCH expires_at = timestamp → active with expiry', () => {
    it('keeps the key active and working, now with the expiry', async () => {
      const { id, key } = await createKey(test, owner, 'row 2');
      const response = await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(owner.auth)
        .send({ expires_at: '2098-01-02T03:04:05.123456Z' })
        .expect(200);
      expect(response.body).toMatchObject({
        is_active: true,
        expires_at: expect.stringMatching(/^2098-01-02T03:04:05\.123\d{3}Z$/),
      });
      expect(await listed(id)).toMatchObject({ is_active: true, expires_at: response.body.expires_at });
      expect(await keyWorks(test, key)).toBe(true);
    });

    it('does not happen with an API key instead of a JWT', async () => {
      const { id, key } = await createKey(test, owner, 'row 2, refused');
      await expectNoStoredChange(test, async () => {
        await test
          .http()
          .patch(`${KEYS}${id}/update/`)
          .set('X-API-Key', key)
          .send({ expires_at: fromNow(60_000) })
          .expect(401);
      });
    });
  });

  describe('active with expiry → PATCH expires_at = null → active, non-expiring', () => {
    it('keeps the key working past the expiry it used to have', async () => {
      const { id, key } = await createKey(test, owner, 'row 3');
      const expiresAt = fromNow(3000);
      await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: expiresAt }).expect(200);
      expect(await keyWorks(test, key)).toBe(true); // cached with that expiry
      const cleared = await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(owner.auth)
        .send({ expires_at: null })
        .expect(200);
      expect(cleared.body).toMatchObject({ is_active: true, expires_at: null });
      await sleep(Math.max(0, Date.parse(expiresAt) + 300 - Date.now()));
      expect(await keyWorks(test, key)).toBe(true);
      expect(await listed(id)).toMatchObject({ is_active: true, expires_at: null });
    });
  });

  describe('active → time reaches expires_at → expired', () => {
    it('rejects the key with 401 once the time passes, and lists it inactive', async () => {
      const { id, key } = await createKey(test, owner, 'row 4');
      const expiresAt = fromNow(3000);
      await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: expiresAt }).expect(200);
      expect(await keyWorks(test, key)).toBe(true);
      expect(await keyWorks(test, key, 'x-api-key')).toBe(true);
      await sleep(Math.max(0, Date.parse(expiresAt) + 100 - Date.now()));
      expect(await keyWorks(test, key)).toBe(false);
      expect(await keyWorks(test, key, 'x-api-key')).toBe(false);
      expect(await listed(id)).toMatchObject({ is_active: false, expires_at: expiresAt.replace('Z', '000Z') });
    });
  });

  describe('active → POST rotate → old key invalidated', () => {
    it('issues a new key with the same name and settings, rotated_from, the full key once; the old key is rejected', async () => {
      const old = await createKey(test, owner, 'row 5');
      const expiresAt = '2097-05-06T07:08:09.000000Z';
      await test.http().patch(`${KEYS}${old.id}/update/`).set(owner.auth).send({ expires_at: expiresAt }).expect(200);
      expect(await keyWorks(test, old.key)).toBe(true);

      const rotated = await test.http().post(`${KEYS}${old.id}/rotate/`).set(owner.auth).expect(201);
      expect(rotated.body).toMatchObject({
        name: 'row 5',
        expires_at: expiresAt,
        is_active: true,
        rotated_from: old.id,
      });
      expect(rotated.body.key).toMatch(/^svc_/);
      expect(await keyWorks(test, old.key)).toBe(false);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
      expect(await listed(old.id)).toMatchObject({ is_active: false });
      expect(await listed(rotated.body.id)).not.toHaveProperty('key');
      expect(await listed(rotated.body.id)).not.toHaveProperty('rotated_from');
    });

    it('does not happen with an API key instead of a JWT', async () => {
      const old = await createKey(test, owner, 'row 5, refused');
      await expectNoStoredChange(test, async () => {
        await test.http().post(`${KEYS}${old.id}/rotate/`).set('Authorization', `Bearer ${old.key}`).expect(401);
      });
      expect(await keyWorks(test, old.key)).toBe(true);
    });
  });

  describe('active → revocation → revoked', () => {
    it.each([
      ['POST .../revoke/', (id: string) => test.http().post(`${KEYS}${id}/revoke/`).set(owner.auth).expect(200)],
      ['DELETE', (id: string) => test.http().delete(`${KEYS}${id}/`).set(owner.auth).expect(204)],
    ])('%s rejects the key with 401 at once and keeps it listed inactive', async (_, revoke) => {
      const { id, key } = await createKey(test, owner, 'row 6');
      expect(await keyWorks(test, key)).toBe(true);
      await revoke(id);
      expect(await keyWorks(test, key)).toBe(false);
      expect(await keyWorks(test, key, 'x-api-key')).toBe(false);
      expect(await listed(id)).toMatchObject({ is_active: false });
      expect((await keyRow(test.db, id)).revoked_at).toBeInstanceOf(Date);
    });
  });

  describe('no way back from a final state', () => {
    it('a revoked key cannot be given an expiry, cleared, or rotated (400), and stays rejected', async () => {
      const { id, key } = await createKey(test, owner, 'revoked, final');
      await test.http().post(`${KEYS}${id}/revoke/`).set(owner.auth).expect(200);
      await expectNoStoredChange(test, async () => {
        await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: null }).expect(400);
        await test
          .http()
          .patch(`${KEYS}${id}/update/`)
          .set(owner.auth)
          .send({ expires_at: fromNow(60_000) })
          .expect(400);
        await test.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).expect(400);
      });
      expect(await keyWorks(test, key)).toBe(false);
    });

    it('an expired key cannot be revived by clearing its expiry (400), and stays rejected', async () => {
      const { id, key } = await createKey(test, owner, 'expired, final');
      const expiresAt = fromNow(3000);
      await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: expiresAt }).expect(200);
      await sleep(Math.max(0, Date.parse(expiresAt) + 100 - Date.now()));
      await expectNoStoredChange(test, async () => {
        await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: null }).expect(400);
      });
      expect(await keyWorks(test, key)).toBe(false);
    });

    it('a rotated-away key cannot be updated or rotated again (400)', async () => {
      const { id, key } = await createKey(test, owner, 'rotated, final');
      await test.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).expect(201);
      await expectNoStoredChange(test, async () => {
        await test.http().patch(`${KEYS}${id}/update/`).set(owner.auth).send({ expires_at: null }).expect(400);
        await test.http().post(`${KEYS}${id}/rotate/`).set(owner.auth).expect(400);
      });
      expect(await keyWorks(test, key)).toBe(false);
    });
  });
});
