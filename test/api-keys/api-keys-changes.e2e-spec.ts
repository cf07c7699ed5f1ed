import { createKey, type SignedInUser, type TestApp } from '../support/app.js';
import { KEYS, startWithAliceAndBob } from '../support/api-keys.js';
import {
  expectNoStoredChange,
  fromNow,
  ISO_MICROS,
  keyRow,
  keyWorks,
  sleep,
  storedMicros,
  UUID,
} from '../support/core.js';

describe('API keys: update, rotate, revoke', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    ({ test, alice } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

  describe('update (expires_at)', () => {
    it('sets a future expiry: 200 with the record, no key, stored as given', async () => {
      const { id, key } = await createKey(test, alice, 'expiring');
      const expiresAt = '2099-06-30T12:00:00Z';
      const response = await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(alice.auth)
        .send({ expires_at: expiresAt })
        .expect(200);
      expect(response.body).toEqual({
        id,
        name: 'expiring',
        key_prefix: key.slice(0, 12),
        is_active: true,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MICROS),
        expires_at: '2099-06-30T12:00:00.000000Z',
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: null,
        credits_used_this_period: 0,
        metadata: {},
        collection_ids: null,
        replaced_by: null,
        grace_until: null,
      });
      expect((await keyRow(test.db, id)).expires_at.toISOString()).toBe('2099-06-30T12:00:00.000Z');
      expect(await keyWorks(test, key)).toBe(true);
    });

    it('accepts an offset and answers in UTC', async () => {
      const { id } = await createKey(test, alice, 'offset');
      const response = await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(alice.auth)
        .send({ expires_at: '2099-01-01T05:30:00+05:30' })
        .expect(200);
      expect(response.body.expires_at).toBe('2099-01-01T00:00:00.000000Z');
    });

    it('clears the expiry with null', async () => {
      const { id } = await createKey(test, alice, 'cleared');
      await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(alice.auth)
        .send({ expires_at: fromNow(3_600_000) })
        .expect(200);
      const response = await test
        .http()
        .patch(`${KEYS}${id}/update/`)
        .set(alice.auth)
        .send({ expires_at: null })
        .expect(200);
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
      [
        'now-ish (one second ago)',
        { expires_at: new Date(Date.now() - 1000).toISOString() },
        'Must be a time in the future.',
      ],
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
        const response = await test
          .http()
          .patch(`${KEYS}${id}/update/`)
          .set(alice.auth)
          .send({ expires_at: null })
          .expect(400);
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
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: null,
        credits_used_this_period: 0,
        metadata: {},
        collection_ids: null,
        replaced_by: null,
        grace_until: null,
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
      const listedOld = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find(
        (key: { id: string }) => key.id === old.id,
      );
      expect(listedOld.is_active).toBe(false);
      // The list links the rotated-away key to its successor.
      expect(listedOld).toMatchObject({ replaced_by: response.body.id, grace_until: null });
    });

    it('accepts an empty JSON body like no body', async () => {
      const old = await createKey(test, alice, 'empty body');
      await test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth).send({}).expect(201);
      expect(await keyWorks(test, old.key)).toBe(false);
    });

    it('keeps the old key working during grace_period_seconds, and not after', async () => {
      const old = await createKey(test, alice, 'graceful');
      const rotated = await test
        .http()
        .post(`${KEYS}${old.id}/rotate/`)
        .set(alice.auth)
        .send({ grace_period_seconds: 2 })
        .expect(201);
      const rotatedAt = Date.now();
      expect(await keyWorks(test, old.key)).toBe(true);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find(
        (key: { id: string }) => key.id === old.id,
      );
      expect(listed.is_active).toBe(false);
      expect(listed.replaced_by).toBe(rotated.body.id);
      expect(Math.abs(Date.parse(listed.grace_until) - (rotatedAt + 2000))).toBeLessThan(1000);
      await sleep(Math.max(0, rotatedAt + 1000 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(true);
      await sleep(Math.max(0, rotatedAt + 2300 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(false);
      expect(await keyWorks(test, rotated.body.key)).toBe(true);
    });

    it('never extends the old key past its own expires_at', async () => {
      const old = await createKey(test, alice, 'expires during grace');
      const expiresAt = fromNow(3000);
      await test.http().patch(`${KEYS}${old.id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      const rotated = await test
        .http()
        .post(`${KEYS}${old.id}/rotate/`)
        .set(alice.auth)
        .send({ grace_period_seconds: 3600 })
        .expect(201);
      expect(rotated.body.expires_at).toBe(expiresAt.replace('Z', '000Z'));
      expect(await keyWorks(test, old.key)).toBe(true);
      await sleep(Math.max(0, Date.parse(expiresAt) + 200 - Date.now()));
      expect(await keyWorks(test, old.key)).toBe(false);
      // The new key carried the same expiry, so it has stopped too.
      expect(await keyWorks(test, rotated.body.key)).toBe(false);
    });

    it('ends the grace period at once when the old key is revoked', async () => {
      const old = await createKey(test, alice, 'grace then revoke');
      const rotated = await test
        .http()
        .post(`${KEYS}${old.id}/rotate/`)
        .set(alice.auth)
        .send({ grace_period_seconds: 3600 })
        .expect(201);
      expect(await keyWorks(test, old.key)).toBe(true);
      const revoked = await test.http().post(`${KEYS}${old.id}/revoke/`).set(alice.auth).expect(200);
      expect(revoked.body).toMatchObject({ is_active: false, replaced_by: rotated.body.id, grace_until: null });
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
        const response = await test
          .http()
          .post(`${KEYS}${old.id}/rotate/`)
          .set(alice.auth)
          .send({ grace_period_seconds: value })
          .expect(400);
        expect(response.body).toEqual({
          detail: `grace_period_seconds: ${message}`,
          fields: { grace_period_seconds: [message] },
        });
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
      const expiresAt = fromNow(3000);
      await test.http().patch(`${KEYS}${id}/update/`).set(alice.auth).send({ expires_at: expiresAt }).expect(200);
      await sleep(Math.max(0, Date.parse(expiresAt) + 100 - Date.now()));
      expect(await keyWorks(test, key)).toBe(false);
      await expectNoStoredChange(test, async () => {
        await test.http().post(`${KEYS}${id}/rotate/`).set(alice.auth).expect(400);
      });
    });

    it('produces exactly one new key from concurrent rotations of one key; the others get 400', async () => {
      const old = await createKey(test, alice, 'raced');
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => test.http().post(`${KEYS}${old.id}/rotate/`).set(alice.auth)),
      );
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
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: null,
        credits_used_this_period: 0,
        metadata: {},
        collection_ids: null,
        replaced_by: null,
        grace_until: null,
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
});
