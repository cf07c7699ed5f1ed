import { LastUsedRecorder } from '../../src/api-keys/last-used-recorder.js';
import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { KEYS, startWithAliceAndBob } from '../support/api-keys.js';
import {
  contractChecksum,
  expectNoStoredChange,
  ISO_MICROS,
  keyRow,
  keyWorks,
  sha256Hex,
  sleep,
  storedMicros,
  until,
  UUID,
} from '../support/core.js';

describe('API keys: create, list, last_used_at', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => test.close());

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
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: null,
        credits_used_this_period: 0,
        metadata: {},
        collection_ids: null,
        replaced_by: null,
        grace_until: null,
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
      const everything = (await test.db.query('SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = $1', [id]))
        .rows[0].row as string;
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
      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body as {
        id: string;
        created_at: string;
      }[];
      for (const key of created) expect(listed.find((entry) => entry.id === key.id)?.created_at).toBe(key.created_at);
    });

    it('trims the name and accepts exactly 100 characters', async () => {
      const trimmed = await test.http().post(KEYS).set(alice.auth).send({ name: '  deploy bot  ' }).expect(201);
      expect(trimmed.body.name).toBe('deploy bot');
      const longest = 'n'.repeat(100);
      const response = await test
        .http()
        .post(KEYS)
        .set(alice.auth)
        .send({ name: `  ${longest}  ` })
        .expect(201);
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
        const response = await test
          .http()
          .post(KEYS)
          .set(alice.auth)
          .set('Content-Type', 'application/json')
          .send(raw)
          .expect(400);
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
        expect(Object.keys(key).sort()).toEqual([
          'collection_ids',
          'created_at',
          'credits_used_this_period',
          'expires_at',
          'grace_until',
          'id',
          'is_active',
          'key_prefix',
          'last_used_at',
          'metadata',
          'monthly_credit_limit',
          'name',
          'rate_limit_per_minute',
          'replaced_by',
          'scopes',
        ]);
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

      const listed = (await test.http().get(KEYS).set(alice.auth).expect(200)).body.find(
        (entry: { id: string }) => entry.id === id,
      );
      expect(listed.last_used_at).toMatch(ISO_MICROS);
      expect(Date.parse(listed.last_used_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(listed.last_used_at)).toBeLessThanOrEqual(Date.now() + 1000);

      // Flushed on the next tick of a 200 ms timer in tests (later on a busy machine).
      const stored = await until(async () => ((await keyRow(test.db, id)).last_used_at as Date | null) ?? undefined);
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
});
