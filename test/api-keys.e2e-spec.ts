import { LastUsedRecorder } from '../src/api-keys/last-used-recorder.js';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from './support/app.js';
import {
  API_KEY_MESSAGE,
  contractChecksum,
  expectNoStoredChange,
  fromNow,
  ISO_MICROS,
  keyRow,
  keyWorks,
  madeUpKey,
  NOT_FOUND,
  sha256Hex,
  sleep,
  storedMicros,
  UUID,
} from './support/core.js';

const KEYS = '/v1/billings/api-keys/';

describe('API keys', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test, 'alice@example.com');
    bob = await signUp(test, 'bob@example.com');
  });
  afterAll(() => test.close());

  const countKeys = async () => (await test.db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n as number;

  describe('create', () => {
    it('returns 201 with the full key once, active, never used, not expiring', async () => {
      const response = await test.http().post(KEYS).set(alice.auth).send({ name: 'CI pipeline' }).expect(201);
      const body = response.body;
      expect(body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'CI pipeline',
        key_prefix: body.key.slice(0, 12),
        is_active: true,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MICROS),
        expires_at: null,
        key: expect.stringMatching(/^svc_[0-9A-Za-z]{38}$/),
      });
      expect(body.key.slice(-6)).toBe(contractChecksum(body.key.slice(4, 36)));
      expect(Math.abs(Date.parse(body.created_at) - Date.now())).toBeLessThan(5_000);
      expect(await keyWorks(test, body.key)).toBe(true);
    });

    it('stores only the SHA-256 hex of the key: no column holds the key or its secret part', async () => {
      const { id, key } = await createKey(test, alice, 'hash check');
      const row = await keyRow(test.db, id);
      expect(row.key_hash).toBe(sha256Hex(key));
      expect(row.key_prefix).toBe(key.slice(0, 12));
      const everything = (await test.db.query('SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = $1', [id])).rows[0].row as string;
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(key.slice(12)); // the part after the visible prefix
    });

    it('gives created_at six fractional digits that are the stored microseconds', async () => {
      const created = [];
      for (let i = 0; i < 5; i++) created.push(await createKey(test, alice, `micro ${i}`));
      for (const key of created) {
        expect(key.created_at).toMatch(ISO_MICROS);
        expect(key.created_at).toBe(await storedMicros(test.db, 'api_keys', 'created_at', key.id));
      }
      // Real microseconds, not milliseconds padded with zeros (five all ending in 000 by chance: ~1e-15).
      expect(created.some((key) => !(key.created_at as string).endsWith('000Z'))).toBe(true);
      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body as { id: string; created_at: string }[];
      for (const key of created) expect(listed.find((entry) => entry.id === key.id)?.created_at).toBe(key.created_at);
    });

    it('trims the name and accepts exactly 100 characters', async () => {
      const trimmed = await test.http().post(KEYS).set(alice.auth).send({ name: '  deploy bot  ' }).expect(201);
      expect(trimmed.body.name).toBe('deploy bot');
      const longest = 'n'.repeat(100);
      const response = await test.http().post(KEYS).set(alice.auth).send({ name: `  ${longest}  ` }).expect(201);
      expect(response.body.name).toBe(longest);
      expect((await keyRow(test.db, response.body.id)).name).toBe(longest);
    });

    it.each([
      ['missing', {}, 'This field is required.'],
      ['null', { name: null }, 'This field is required.'],
      ['a number', { name: 42 }, 'Not a valid string.'],
      ['a list', { name: ['a'] }, 'Not a valid string.'],
      ['an object', { name: { first: 'a' } }, 'Not a valid string.'],
      ['empty', { name: '' }, 'This field is required.'],
      ['blank', { name: ' \t\n ' }, 'This field is required.'],
      ['101 characters', { name: 'x'.repeat(101) }, 'Ensure this field has no more than 100 characters.'],
      ['5,000 characters', { name: 'x'.repeat(5000) }, 'Ensure this field has no more than 100 characters.'],
    ])('refuses a name that is %s with 400 naming the field, and stores nothing', async (_, body, message) => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post(KEYS).set(alice.auth).send(body).expect(400);
        expect(response.body).toEqual({ detail: `name: ${message}`, fields: { name: [message] } });
      });
    });

    it.each([
      ['a JSON array', '[{"name":"x"}]'],
      ['a JSON string', '"x"'],
      ['a JSON number', '7'],
    ])('refuses a body that is %s with 400, and stores nothing', async (_, raw) => {
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post(KEYS).set(alice.auth).set('Content-Type', 'application/json').send(raw).expect(400);
        expect(typeof response.body.detail).toBe('string');
      });
    });
  });

  describe('list', () => {
    it('lists only the caller’s keys, newest first, without key or rotated_from', async () => {
      const carol = await signUp(test);
      const first = await createKey(test, carol, 'first');
      const second = await createKey(test, carol, 'second');
      const rotated = (await test.http().post(`${KEYS}${first.id}/rotate/`).set(carol.auth).expect(201)).body;
      await createKey(test, bob, 'bob’s');

      const response = await test.http().get(KEYS).set(carol.auth).expect(200);
      expect(response.body.map((key: { id: string }) => key.id)).toEqual([rotated.id, second.id, first.id]);
      for (const key of response.body) {
        expect(Object.keys(key).sort()).toEqual(['created_at', 'expires_at', 'id', 'is_active', 'key_prefix', 'last_used_at', 'name']);
      }
      expect(JSON.stringify(response.body)).not.toContain(first.key.slice(12));
      expect(JSON.stringify(response.body)).not.toContain(rotated.key.slice(12));
      const createdAt = response.body.map((key: { created_at: string }) => key.created_at);
      expect([...createdAt].sort().reverse()).toEqual(createdAt);
    });

    it('keeps revoked keys listed with is_active false', async () => {
      const dave = await signUp(test);
      const kept = await createKey(test, dave, 'kept');
      const revoked = await createKey(test, dave, 'revoked');
      await test.http().post(`${KEYS}${revoked.id}/revoke/`).set(dave.auth).expect(200);
      const deleted = await createKey(test, dave, 'deleted');
      await test.http().delete(`${KEYS}${deleted.id}/`).set(dave.auth).expect(204);

      const listed = (await test.http().get(KEYS).set(dave.auth).expect(200)).body;
      expect(listed.map((key: { id: string; is_active: boolean }) => [key.id, key.is_active])).toEqual([
        [deleted.id, false],
        [revoked.id, false],
        [kept.id, true],
      ]);
    });

    it('is an empty array for a user without keys', async () => {
      const erin = await signUp(test);
      expect((await test.http().get(KEYS).set(erin.auth).expect(200)).body).toEqual([]);
    });

    it('answers without the trailing slash too', async () => {
      await test.http().get('/v1/billings/api-keys').set(alice.auth).expect(200);
    });
  });

  describe('last_used_at', () => {
    it('is null until the key is used, then set in the list and, after the flush, in the database', async () => {
      const { id, key } = await createKey(test, alice, 'usage');
      expect((await keyRow(test.db, id)).last_used_at).toBeNull();
      const before = Date.now();
      expect(await keyWorks(test, key, 'x-api-key')).toBe(true);

      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find((entry: { id: string }) => entry.id === id);
      expect(listed.last_used_at).toMatch(ISO_MICROS);
      expect(Date.parse(listed.last_used_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(listed.last_used_at)).toBeLessThanOrEqual(Date.now() + 1000);

      await sleep(600); // the flush interval is 200 ms in tests
      const stored = (await keyRow(test.db, id)).last_used_at as Date;
      expect(stored).toBeInstanceOf(Date);
      expect(Math.abs(stored.getTime() - Date.parse(listed.last_used_at))).toBeLessThan(1000);
    });

    it('is stored once a flush returns, even when another flush was already writing (as at shutdown)', async () => {
      const { id, key } = await createKey(test, alice, 'flush race');
      const recorder = test.app.get(LastUsedRecorder);
      await recorder.flush();
      expect(await keyWorks(test, key)).toBe(true);
      const timerWrite = recorder.flush(); // what the interval timer does: it takes the pending stamps
      await recorder.flush(); // what shutdown does right after
      expect((await keyRow(test.db, id)).last_used_at).toBeInstanceOf(Date);
      await timerWrite;
    });

    it('is not set by a refused use of a revoked key', async () => {
      const { id, key } = await createKey(test, alice, 'revoked before use');
      await test.http().delete(`${KEYS}${id}/`).set(alice.auth).expect(204);
      expect(await keyWorks(test, key)).toBe(false);
      await sleep(600);
      expect((await keyRow(test.db, id)).last_used_at).toBeNull();
    });
  });

  describe('update (expires_at)', () => {
    it('sets a future expiry: 200 with the record, no key, stored as given', async () => {
      const { id, key } = await createKey(test, alice, 'expiring');
      const expiresAt = '2099-06-30T12:00:00Z';
      const response = await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      expect(response.body).toEqual({
        id,
        name: 'expiring',
        key_prefix: key.slice(0, 12),
        is_active: true,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MICROS),
        expires_at: '2099-06-30T12:00:00.000000Z',
      });
      expect((await keyRow(test.db, id)).expires_at.toISOString()).toBe('2099-06-30T12:00:00.000Z');
      expect(await keyWorks(test, key)).toBe(true);
    });

    it('accepts an offset and answers in UTC', async () => {
      const { id } = await createKey(test, alice, 'offset');
      const response = await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: '2099-01-01T05:30:00+05:30' }).expect(200);
      expect(response.body.expires_at).toBe('2099-01-01T00:00:00.000000Z');
    });

    it('clears the expiry with null', async () => {
      const { id } = await createKey(test, alice, 'cleared');
      await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: fromNow(3_600_000) }).expect(200);
      const response = await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: null }).expect(200);
      expect(response.body.expires_at).toBeNull();
      expect((await keyRow(test.db, id)).expires_at).toBeNull();
    });

    it.each([
      ['missing', {}, 'This field is required.'],
      ['a number', { expires_at: 1893456000 }, /^Datetime has wrong format/],
      ['a boolean', { expires_at: true }, /^Datetime has wrong format/],
      ['not a timestamp', { expires_at: 'tomorrow' }, /^Datetime has wrong format/],
      ['without a zone', { expires_at: '2099-01-01T00:00:00' }, /^Datetime has wrong format/],
      ['a date only', { expires_at: '2099-01-01' }, /^Datetime has wrong format/],
      ['an impossible date', { expires_at: '2099-02-30T00:00:00Z' }, /^Datetime has wrong format/],
      ['an impossible hour', { expires_at: '2099-02-28T24:00:00Z' }, /^Datetime has wrong format/],
      ['out of range', { expires_at: '2099-13-45T25:61:00Z' }, /^Datetime has wrong format/],
      ['in the past', { expires_at: '2020-01-01T00:00:00Z' }, 'Must be a time in the future.'],
      ['now-ish (one second ago)', { expires_at: new Date(Date.now() - 1000).toISOString() }, 'Must be a time in the future.'],
    ])('refuses an expires_at that is %s with 400 naming the field, and changes nothing', async (_, body, message) => {
      const { id } = await createKey(test, alice, 'bad update');
      await expectNoStoredChange(test, async () => {
        const response = await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send(body).expect(400);
        if (typeof message === 'string') expect(response.body.detail).toBe(`expires_at: ${message}`);
        else expect(response.body.detail.replace(/^expires_at: /, '')).toMatch(message);
        expect(response.body.detail.startsWith('expires_at: ')).toBe(true);
        expect(Object.keys(response.body.fields)).toEqual(['expires_at']);
      });
    });

    it('refuses to change a revoked key with 400 and changes nothing', async () => {
      const { id } = await createKey(test, alice, 'revoked then patched');
      await test.http().post(`${KEYS}${id}/revoke/`).set(alice.auth).expect(200);
      await expectNoStoredChange(test, async () => {
        const response = await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: null }).expect(400);
        expect(typeof response.body.detail).toBe('string');
      });
    });
  });

  describe('rotate', () => {
    it('answers 201 with a new key, same name and expiry, rotated_from, and invalidates the old key at once', async () => {
      const old = await createKey(test, alice, 'to rotate');
      const expiresAt = '2099-03-01T00:00:00.000000Z';
      await test.http().patch(`${KEYS}${old.id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      expect(await keyWorks(test, old.key)).toBe(true); // cached on this instance before the rotation

      const response = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'to rotate',
        key_prefix: response.body.key.slice(0, 12),
        is_active: true,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MICROS),
        expires_at: expiresAt,
        key: expect.stringMatching(/^svc_[0-9A-Za-z]{38}$/),
        rotated_from: old.id,
      });
      expect(response.body.id).not.toBe(old.id);
      expect(response.body.key).not.toBe(old.key);
      expect(response.body.created_at).toBe(await storedMicros(test.db, 'api_keys', 'created_at', response.body.id));

      expect(await keyWorks(test, old.key)).toBe(false);
      expect(await keyWorks(test, response.body.key)).toBe(true);
      const oldRow = await keyRow(test.db, old.id);
      expect(oldRow.is_active).toBe(false);
      expect(oldRow.replaced_by_id).toBe(response.body.id);
      expect((await keyRow(test.db, response.body.id)).rotated_from_id).toBe(old.id);
      const listedOld = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find((key: { id: string }) => key.id === old.id);
      expect(listedOld.is_active).toBe(false);
    });

    it('accepts an empty JSON body like no body', async () => {
      const old = await createKey(test, alice, 'empty body');
      await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({}).expect(201);
      expect(await keyWorks(test, old.key)).toBe(false);
    });

    it('keeps the old key working during grace_period_seconds, and not after', async () => {
      const old = await createKey(test, alice, 'graceful');
      const rotated = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({ grace_period_seconds: 2 }).expect(201);
      const rotatedAt = Date.now();
      expect(await keyWorks(test, old.key)).toBe(true);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find((key: { id: string }) => key.id === old.id);
      expect(listed.is_active).toBe(false);
      await sleep(Math.max(0, rotatedAt + 1000 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(true);
      await sleep(Math.max(0, rotatedAt + 2300 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(false);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
    });

    it('never extends the old key past its own expires_at', async () => {
      const old = await createKey(test, alice, 'expires during grace');
      const expiresAt = fromNow(2000);
      await test.http().patch(`${KEYS}${old.id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      const rotated = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({ grace_period_seconds: 3600 }).expect(201);
      expect(rotated.body.expires_at).toBe(expiresAt.replace('Z', '000Z'));
      expect(await keyWorks(test, old.key)).toBe(true);
      await sleep(Math.max(0, Date.parse(expiresAt) + 200 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(false);
      // The new key carried the same expiry, so it has stopped too.
      expect(await keyWorks(test, rotated.body.key)).toBe(false);
    });

    it('ends the grace period at once when the old key is revoked', async () => {
      const old = await createKey(test, alice, 'grace then revoke');
      const rotated = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({ grace_period_seconds: 3600 }).expect(201);
      expect(await keyWorks(test, old.key)).toBe(true);
      const revoked = await test.http().post(`${KEYS}${old.id}/revoke/`).set(alice.auth).expect(200);
      expect(revoked.body.is_active).toBe(false);
      expect(await keyWorks(test, old.key)).toBe(false);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
      expect((await keyRow(test.db, old.id)).revoked_at).toBeInstanceOf(Date);
    });

    it.each([
      ['negative', -1, 'Ensure this value is greater than or equal to 0.'],
      ['over a day', 86_401, 'Ensure this value is less than or equal to 86400.'],
      ['a string', '60', 'A valid integer is required.'],
      ['a fraction', 1.5, 'A valid integer is required.'],
    ])('refuses a grace_period_seconds that is %s with 400, and issues no key', async (_, value, message) => {
      const old = await createKey(test, alice, 'bad grace');
      await expectNoStoredChange(test, async () => {
        const response = await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({ grace_period_seconds: value }).expect(400);
        expect(response.body).toEqual({ detail: `grace_period_seconds: ${message}`, fields: { grace_period_seconds: [message] } });
      });
      expect(await keyWorks(test, old.key)).toBe(true);
    });

    it('refuses to rotate a revoked key or a rotated-away key with 400, and issues no key', async () => {
      const revoked = await createKey(test, alice, 'revoked');
      await test.http().delete(`${KEYS}${revoked.id}/`).set(alice.auth).expect(204);
      const rotatedAway = await createKey(test, alice, 'rotated away');
      await test.http().post(`${KEYS}${rotatedAway.id}/rotate/`).set(alice.auth).expect(201);
      await expectNoStoredChange(test, async () => {
        for (const id of [revoked.id, rotatedAway.id]) {
          const response = await test.http().post(`${KEYS}${id}/rotate/`).set(alice.auth).expect(400);
          expect(typeof response.body.detail).toBe('string');
        }
      });
    });

    it('refuses to rotate an expired key with 400', async () => {
      const { id, key } = await createKey(test, alice, 'about to expire');
      const expiresAt = fromNow(1200);
      await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      await sleep(Math.max(0, Date.parse(expiresAt) + 100 - Date.now()));
      expect(await keyWorks(test, key)).toBe(false);
      await expectNoStoredChange(test, async () => {
        await test.http().post(`${KEYS}${id}/rotate/`).set(alice.auth).expect(400);
      });
    });

    it('produces exactly one new key from concurrent rotations of one key; the others get 400', async () => {
      const old = await createKey(test, alice, 'raced');
      const responses = await Promise.all(Array.from({ length: 5 }, () => test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth)));
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 400, 400, 400, 400]);
      const { rows } = await test.db.query('SELECT id FROM api_keys WHERE rotated_from_id = $1', [old.id]);
      const winner = responses.find((response) => response.status === 201)!;
      expect(rows).toEqual([{ id: winner.body.id }]);
      expect((await keyRow(test.db, old.id)).replaced_by_id).toBe(winner.body.id);
      expect(await keyWorks(test, winner.body.key)).toBe(true);
    });
  });

  describe('revoke', () => {
    it('POST .../revoke/ answers 200 with the record, is_active false, and the key is refused at once', async () => {
      const { id, key } = await createKey(test, alice, 'revoke me');
      expect(await keyWorks(test, key)).toBe(true); // now cached on this instance
      const response = await test.http().post(`${KEYS}${id}/revoke/`).set(alice.auth).expect(200);
      expect(response.body).toEqual({
        id,
        name: 'revoke me',
        key_prefix: key.slice(0, 12),
        is_active: false,
        last_used_at: expect.stringMatching(ISO_MICROS),
        created_at: expect.stringMatching(ISO_MICROS),
        expires_at: null,
      });
      expect(await keyWorks(test, key)).toBe(false);
      expect(await keyWorks(test, key, 'x-api-key')).toBe(false);
      const row = await keyRow(test.db, id);
      expect(row.is_active).toBe(false);
      expect(row.revoked_at).toBeInstanceOf(Date);
    });

    it('DELETE answers 204 with no body, keeps the record, and the key is refused at once', async () => {
      const { id, key } = await createKey(test, alice, 'delete me');
      expect(await keyWorks(test, key)).toBe(true);
      const response = await test.http().delete(`${KEYS}${id}/`).set(alice.auth).expect(204);
      expect(response.text).toBe('');
      expect(await keyWorks(test, key)).toBe(false);
      expect((await keyRow(test.db, id)).revoked_at).toBeInstanceOf(Date);
    });

    it('is idempotent: revoking again changes nothing', async () => {
      const { id } = await createKey(test, alice, 'twice');
      await test.http().post(`${KEYS}${id}/revoke/`).set(alice.auth).expect(200);
      await expectNoStoredChange(test, async () => {
        await test.http().post(`${KEYS}${id}/revoke/`).set(alice.auth).expect(200);
        await test.http().delete(`${KEYS}${id}`).set(alice.auth).expect(204);
      });
    });
  });

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
        expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: NOT_FOUND });
      });
      expect(await keyWorks(test, bobs.key)).toBe(true);
    });

    it.each(actions)('%s of an unknown id is a 404', async (_, act) => {
      const response = await act(unknownId, alice);
      expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: NOT_FOUND });
    });

    it.each(actions)('%s with a malformed id is a 404, never a 500', async (_, act) => {
      await expectNoStoredChange(test, async () => {
        for (const id of ['not-a-uuid', '1', "1' OR '1'='1", '7f1d1c8e2a4b4c6d8e9f0a1b2c3d4e5f0', '%00']) {
          const response = await act(encodeURIComponent(id), alice);
          expect({ id, status: response.status, body: response.body }).toEqual({ id, status: 404, body: NOT_FOUND });
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

    const endpoints: [string, (auth: Record<string, string>) => Promise<{ status: number; body: { detail?: string } }>][] = [
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
      for (const candidate of [madeUpKey('z'), mistyped, key.slice(0, -1), `${key}x`, 'svc_', 'svc_short', `svc_${key.slice(4).toUpperCase()}`]) {
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
      const before = await countKeys();
      await expectNoStoredChange(test, async () => {
        expect(await keyWorks(test, key)).toBe(false);
        expect(await keyWorks(test, madeUpKey('q'))).toBe(false);
      });
      expect(await countKeys()).toBe(before);
    });
  });
});
