import { DataSource } from 'typeorm';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { notFound } from '../support/core.js';
import { organizationIdOf, signInAdmin } from '../support/knowledge.js';

// Rows are made in SQL: a thousand API calls would only slow the test, not change what it shows.

describe('reads are bounded', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  it('runs every statement of the service under a 15 s statement_timeout, enforced by the server', async () => {
    const rows: { statement_timeout: string }[] = await test.app.get(DataSource).query('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe('15s');
  });

  it('plans statements without JIT compilation (the server default is on)', async () => {
    const {
      rows: [server],
    } = await test.db.query<{ jit: string }>('SHOW jit');
    expect(server.jit).toBe('on');
    const rows: { jit: string }[] = await test.app.get(DataSource).query('SHOW jit');
    expect(rows).toEqual([{ jit: 'off' }]);
  });

  it('counts the daily usage of this period only, whatever lies before it', async () => {
    const alice = await signUp(test);
    const organizationId = await organizationIdOf(test, alice.id);
    await test.db.query(
      `INSERT INTO usage_events (organization_id, user_id, operation, credits, created_at)
       SELECT $1, $2, 'query', 1, (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') - make_interval(hours => n)
         FROM generate_series(1, 500) AS n`,
      [organizationId, alice.id],
    );
    const daily = (await test.http().get('/v1/billings/usage/daily/').set(alice.auth).expect(200)).body as {
      credits: number;
    }[];
    expect(daily.reduce((sum, day) => sum + day.credits, 0)).toBe(0);
  });
});

describe('lists answered whole are bounded', () => {
  let test: TestApp;
  let alice: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  it('lists the newest 1,000 API keys of a user who has more', async () => {
    const organizationId = await organizationIdOf(test, alice.id);
    await test.db.query(
      `INSERT INTO api_keys (id, lineage_id, user_id, organization_id, name, key_prefix, key_hash, is_active, revoked_at, created_at)
       SELECT id, id, $1, $2, 'old ' || n, 'svc_old' || lpad(n::text, 5, '0'), md5(n::text) || md5('k' || n), false, now(),
              now() - make_interval(mins => n)
         FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, 1005) AS n) AS keys`,
      [alice.id, organizationId],
    );
    const newest = await createKey(test, alice, 'the newest');
    const listed = (await test.http().get('/v1/billings/api-keys/').set(alice.auth).expect(200)).body as {
      id: string;
      name: string;
    }[];
    expect(listed).toHaveLength(1000);
    expect(listed[0].id).toBe(newest.id);
    expect(listed[1].name).toBe('old 1');
    expect(listed[999].name).toBe('old 999');
  });

  it('lists at most 1,000 regions and 1,000 domains, by name', async () => {
    await test.db.query(
      `INSERT INTO regions (name, slug) SELECT 'Region ' || lpad(n::text, 4, '0'), 'r-' || n FROM generate_series(1, 1003) AS n`,
    );
    const regions = (await test.http().get('/v1/regions/').set(alice.auth).expect(200)).body as { name: string }[];
    expect(regions).toHaveLength(1000);
    expect(regions[0].name).toBe('Region 0001');
    const admin = await signInAdmin(test);
    await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Domain 0000', slug: 'd-0' }).expect(201);
    await test.db.query(
      `INSERT INTO domains (name, slug, description, is_active)
       SELECT 'Domain ' || lpad(n::text, 4, '0'), 'd-' || n, '', true FROM generate_series(1, 1001) AS n`,
    );
    const domains = (await test.http().get('/v1/domains/').set(alice.auth).expect(200)).body as { name: string }[];
    expect(domains).toHaveLength(1000);
    expect(domains[0].name).toBe('Domain 0000');
  });

  describe("a chat session's messages", () => {
    let session: string;

    beforeAll(async () => {
      session = (await test.http().post('/v1/chat/sessions/').set(alice.auth).send({ title: 'long' }).expect(201)).body
        .id;
      await test.db.query(
        `INSERT INTO chat_messages (session_id, role, content, created_at)
         SELECT $1, CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message ' || n, now() - make_interval(secs => 1000 - n)
           FROM generate_series(1, 150) AS n`,
        [session],
      );
    });

    it('come with the session as its newest 100, oldest first', async () => {
      const detail = (await test.http().get(`/v1/chat/sessions/${session}/`).set(alice.auth).expect(200)).body as {
        messages: { content: string }[];
      };
      expect(detail.messages.map((message) => message.content)).toEqual(
        Array.from({ length: 100 }, (_, i) => `message ${i + 51}`),
      );
    });

    it('are all reachable a page at a time, oldest first', async () => {
      const first = await test
        .http()
        .get(`/v1/chat/sessions/${session}/messages/?limit=100`)
        .set(alice.auth)
        .expect(200);
      expect(first.body).toMatchObject({
        count: 150,
        previous: null,
        next: `/v1/chat/sessions/${session}/messages/?limit=100&offset=100`,
      });
      expect(first.body.results[0]).toMatchObject({ role: 'user', content: 'message 1' });
      const second = await test.http().get(first.body.next).set(alice.auth).expect(200);
      expect(second.body.results.map((message: { content: string }) => message.content)).toEqual(
        Array.from({ length: 50 }, (_, i) => `message ${i + 101}`),
      );
      expect(second.body.next).toBeNull();
    });

    it("are another user's 404, and a bad page size is a 400 naming it", async () => {
      const bob = await signUp(test);
      expect((await test.http().get(`/v1/chat/sessions/${session}/messages/`).set(bob.auth).expect(404)).body).toEqual(
        notFound('Session', session),
      );
      const bad = await test.http().get(`/v1/chat/sessions/${session}/messages/?limit=101`).set(alice.auth).expect(400);
      expect(bad.body.detail).toBe('limit: Must be a whole number from 1 to 100.');
    });
  });
});
