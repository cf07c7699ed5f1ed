import { QuotaService } from '../../src/billing/quota.service.js';
import type { Principal } from '../../src/common/principal.js';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { NOT_PROVIDED } from '../support/core.js';

/*
 * Usage by key: the ledger's `key_id`, `from` and `to` filters, and the per-key summary of the period.
 * Spends go through the quota service as a query would; old lines are written in SQL with their date.
 */

const USAGE = '/v1/billings/usage/';
const BY_KEY = '/v1/billings/usage/keys/';
const TIMESTAMP_FORMAT =
  'Datetime has wrong format. Use ISO 8601 with a time zone, e.g. 2026-11-01T00:00:00Z, or a date, e.g. 2026-11-01.';

const badRequest = (field: string, message: string) => ({
  detail: `${field}: ${message}`,
  fields: { [field]: [message] },
});

interface KeyUsageRow {
  key_id: string | null;
  key_prefix: string | null;
  name: string | null;
  requests: number;
  credits: number;
}

interface Key {
  id: string;
  key: string;
  key_prefix: string;
}

describe('usage by key', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  async function organizationOf(user: SignedInUser): Promise<string> {
    const me = await test.http().get('/auth/users/me/').set(user.auth).expect(200);
    return me.body.organization_id as string;
  }

  /** Spends `times` credits as the user (JWT) or through one of their keys. */
  async function spend(user: SignedInUser, organizationId: string, times: number, key?: Key): Promise<void> {
    const caller: Principal = {
      kind: key ? 'api_key' : 'jwt',
      userId: user.id,
      organizationId,
      role: 'owner',
      isAdmin: false,
      apiKeyId: key?.id ?? null,
      keyPrefix: key?.key_prefix ?? null,
    };
    for (let i = 0; i < times; i++) await test.app.get(QuotaService).spend(caller, 'query', null);
  }

  /** A ledger line at a given time, as an older spend left it. */
  async function lineAt(organizationId: string, createdAt: string, key?: Key): Promise<void> {
    await test.db.query(
      `INSERT INTO usage_events (organization_id, api_key_id, key_prefix, operation, credits, created_at)
       VALUES ($1, $2, $3, 'query', 1, $4)`,
      [organizationId, key?.id ?? null, key?.key_prefix ?? null, createdAt],
    );
  }

  const usage = async (user: SignedInUser, query: string) =>
    (await test.http().get(`${USAGE}?${query}`).set(user.auth).expect(200)).body as {
      count: number;
      next: string | null;
      results: { key_id: string | null; key_prefix: string | null; created_at: string }[];
    };

  describe('the ledger filters', () => {
    let alice: SignedInUser;
    let organizationId: string;
    let ci: Key;
    let staging: Key;

    beforeAll(async () => {
      alice = await signUp(test);
      organizationId = await organizationOf(alice);
      ci = await createKey(test, alice, 'ci');
      staging = await createKey(test, alice, 'staging');
      await spend(alice, organizationId, 3, ci);
      await spend(alice, organizationId, 2, staging);
      await spend(alice, organizationId, 1);
    });

    it("lists only one key's lines with key_id, and names the key on every line", async () => {
      const page = await usage(alice, `key_id=${ci.id}`);
      expect(page.count).toBe(3);
      expect(page.results.map((line) => [line.key_id, line.key_prefix])).toEqual(
        Array.from({ length: 3 }, () => [ci.id, ci.key_prefix]),
      );
      const all = await usage(alice, '');
      expect(all.count).toBe(6);
      expect(all.results.filter((line) => line.key_id === null).map((line) => line.key_prefix)).toEqual([null]);
    });

    it('accepts a key id in capitals', async () => {
      expect((await usage(alice, `key_id=${staging.id.toUpperCase()}`)).count).toBe(2);
    });

    it("answers an empty page for another organization's key, never its lines", async () => {
      const bob = await signUp(test);
      const bobsKey = await createKey(test, bob, 'bob');
      await spend(bob, await organizationOf(bob), 2, bobsKey);
      expect(await usage(alice, `key_id=${bobsKey.id}`)).toEqual({ count: 0, next: null, previous: null, results: [] });
      // And a key that does not exist at all.
      expect((await usage(alice, 'key_id=00000000-0000-4000-8000-000000000000')).count).toBe(0);
    });

    it('keeps the filters in the page links', async () => {
      const page = await usage(alice, `key_id=${ci.id}&limit=1`);
      expect(page.next).toBe(`${USAGE}?key_id=${ci.id}&limit=1&offset=1`);
    });
  });

  describe('the time filters', () => {
    let alice: SignedInUser;
    let organizationId: string;
    let key: Key;

    beforeAll(async () => {
      alice = await signUp(test);
      organizationId = await organizationOf(alice);
      key = await createKey(test, alice, 'partner');
      await lineAt(organizationId, '2026-10-31T23:59:59.999999Z');
      await lineAt(organizationId, '2026-11-01T00:00:00Z', key);
      await lineAt(organizationId, '2026-11-15T12:00:00Z');
      await lineAt(organizationId, '2026-11-30T23:59:59.999Z', key);
      await lineAt(organizationId, '2026-12-01T00:00:00Z', key);
    });

    const instants = async (query: string) => (await usage(alice, query)).results.map((line) => line.created_at);

    it('takes `from` inclusive and `to` exclusive', async () => {
      expect(await instants('from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z')).toEqual([
        '2026-11-30T23:59:59.999000Z',
        '2026-11-15T12:00:00.000000Z',
        '2026-11-01T00:00:00.000000Z',
      ]);
    });

    it('reads a date as 00:00 UTC, and an offset as the instant it names', async () => {
      expect((await usage(alice, 'from=2026-11-01&to=2026-12-01')).count).toBe(3);
      // 2026-11-15T14:00:00+02:00 is 12:00 UTC ('+' encoded, as in any query string).
      expect(await instants('from=2026-11-15T14:00:00%2B02:00&to=2026-11-15T14:00:01%2B02:00')).toEqual([
        '2026-11-15T12:00:00.000000Z',
      ]);
    });

    it('takes each bound alone, and combines them with key_id', async () => {
      expect((await usage(alice, 'from=2026-12-01')).count).toBe(1);
      expect((await usage(alice, 'to=2026-11-01')).count).toBe(1);
      expect((await usage(alice, `key_id=${key.id}&from=2026-11-01&to=2026-12-01`)).count).toBe(2);
      // Empty values are no filter; from equal to to is an empty range.
      expect((await usage(alice, 'key_id=&from=&to=')).count).toBe(5);
      expect((await usage(alice, 'from=2026-11-15T12:00:00Z&to=2026-11-15T12:00:00Z')).count).toBe(0);
    });
  });

  describe('bad filters', () => {
    let alice: SignedInUser;
    beforeAll(async () => {
      alice = await signUp(test);
    });

    const rejects = (query: string, body: object) =>
      test.http().get(`${USAGE}?${query}`).set(alice.auth).expect(400, body);

    it('refuses a key_id that is not a UUID', async () => {
      for (const value of ['abc', '123', 'svc_7GkQ2mZp', '00000000-0000-4000-8000-00000000000g', "1' OR '1'='1"]) {
        await rejects(`key_id=${encodeURIComponent(value)}`, badRequest('key_id', 'Must be a valid UUID.'));
      }
    });

    it('refuses a from or to that is not ISO 8601 with a zone', async () => {
      for (const value of [
        'yesterday',
        '2026-11-01T00:00:00', // no zone
        '2026-11-01T00:00:00 02:00', // an unencoded '+' arrives as a space
        '2026-02-30',
        '2026-13-01T00:00:00Z',
        '1763700000',
        '2026-11-01T24:00:00Z',
      ]) {
        await rejects(`from=${encodeURIComponent(value)}`, badRequest('from', TIMESTAMP_FORMAT));
        await rejects(`to=${encodeURIComponent(value)}`, badRequest('to', TIMESTAMP_FORMAT));
      }
    });

    it('refuses from after to', async () => {
      await rejects('from=2026-11-02&to=2026-11-01', badRequest('from', 'Must not be after `to`.'));
      await rejects('from=2026-11-01T00:00:01Z&to=2026-11-01T00:00:00Z', badRequest('from', 'Must not be after `to`.'));
    });

    it('refuses a parameter given twice', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      await rejects(`key_id=${id}&key_id=${id}`, badRequest('key_id', 'Give this parameter once.'));
      await rejects('from=2026-11-01&from=2026-11-02', badRequest('from', 'Give this parameter once.'));
    });

    it('asks for credentials before reading any filter', async () => {
      await test.http().get(`${USAGE}?key_id=abc`).expect(401, NOT_PROVIDED);
      await test.http().get(BY_KEY).expect(401, NOT_PROVIDED);
    });
  });

  describe('the per-key summary of the period', () => {
    const summary = async (user: SignedInUser | { auth: Record<string, string> }) =>
      (await test.http().get(BY_KEY).set(user.auth).expect(200)).body as KeyUsageRow[];

    it('has the JWT row, with zeros, for an organization that spent nothing', async () => {
      const alice = await signUp(test);
      expect(await summary(alice)).toEqual([{ key_id: null, key_prefix: null, name: null, requests: 0, credits: 0 }]);
    });

    it('lists each key with its requests and credits, most credits first, and usable keys with zeros', async () => {
      const alice = await signUp(test);
      const organizationId = await organizationOf(alice);
      const ci = await createKey(test, alice, 'ci');
      const staging = await createKey(test, alice, 'staging');
      const idle = await createKey(test, alice, 'idle');
      await spend(alice, organizationId, 3, ci);
      await spend(alice, organizationId, 1, staging);
      await spend(alice, organizationId, 2);
      // Last month's spending is not this period's.
      await test.db.query(
        `INSERT INTO usage_events (organization_id, api_key_id, key_prefix, operation, credits, created_at)
         VALUES ($1, $2, $3, 'query', 1, date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 second')`,
        [organizationId, staging.id, staging.key_prefix],
      );

      const rows = await summary(alice);
      expect(rows).toEqual([
        { key_id: ci.id, key_prefix: ci.key_prefix, name: 'ci', requests: 3, credits: 3 },
        { key_id: null, key_prefix: null, name: null, requests: 2, credits: 2 },
        { key_id: staging.id, key_prefix: staging.key_prefix, name: 'staging', requests: 1, credits: 1 },
        { key_id: idle.id, key_prefix: idle.key_prefix, name: 'idle', requests: 0, credits: 0 },
      ]);
      // The rows add up to the period's credits_used.
      const subscription = await test.http().get('/v1/billings/subscription/').set(alice.auth).expect(200);
      expect(rows.reduce((sum, row) => sum + row.credits, 0)).toBe(subscription.body.current_quota.credits_used);
      // The same through one of the keys.
      expect(await summary({ auth: { 'X-API-Key': ci.key } })).toEqual(rows);
    });

    it('lists a revoked, expired or rotated-away key only when it spent this period', async () => {
      const alice = await signUp(test);
      const organizationId = await organizationOf(alice);
      const spent = await createKey(test, alice, 'spent then revoked');
      const unused = await createKey(test, alice, 'revoked unused');
      const expired = await createKey(test, alice, 'expired unused');
      const rotated = await createKey(test, alice, 'rotated');
      await spend(alice, organizationId, 1, spent);
      for (const key of [spent, unused]) {
        await test.http().post(`/v1/billings/api-keys/${key.id}/revoke/`).set(alice.auth).expect(200);
      }
      await test.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expired.id]);
      const replacement = (
        await test.http().post(`/v1/billings/api-keys/${rotated.id}/rotate/`).set(alice.auth).expect(201)
      ).body as Key;

      const names = (await summary(alice)).map((row) => row.name);
      expect(names).toEqual(['spent then revoked', null, 'rotated']);
      expect((await summary(alice))[2].key_id).toBe(replacement.id);
    });

    it("never lists another organization's keys or spending", async () => {
      const alice = await signUp(test);
      const bob = await signUp(test);
      const bobsKey = await createKey(test, bob, 'bob');
      await spend(bob, await organizationOf(bob), 4, bobsKey);
      await spend(bob, await organizationOf(bob), 1);
      expect(await summary(alice)).toEqual([{ key_id: null, key_prefix: null, name: null, requests: 0, credits: 0 }]);
    });
  });
});
