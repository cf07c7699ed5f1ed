import { IdempotencyKeyPurger } from '../../src/idempotency/idempotency-key-purger.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { createDomain, creditsUsed, HANDBOOK, organizationIdOf } from '../support/knowledge.js';

const BUDGET_MB = 1;
const BUDGET = BUDGET_MB * 1024 * 1024;
/** What a row that keeps no answer still counts (ROW_OVERHEAD_BYTES + the key), times the 8 connections. */
const IN_FLIGHT_SLACK = 8 * (200 + 64);

const STORE_FULL = {
  detail:
    "This organization's Idempotency-Key store is full (1 MB of answers kept for 24 hours); the request was not run. " +
    'Retry it once older keys have expired, or send it without Idempotency-Key.',
};
const notKept = (why: string) => ({
  detail:
    `The request with this Idempotency-Key already ran and was answered, but its answer was not kept for replays (${why}). ` +
    'It was not run again.',
});

let counter = 0;
const freshKey = () => `bound-${Date.now()}-${++counter}`;

/** Documents whose metadata (~8 KB, under DOCUMENT_METADATA_MAX_BYTES) make a `top_k: 10` search answer ~80 KB. */
const HEAVY_DOCUMENTS = Array.from({ length: 12 }, (_, i) => ({
  title: `Heavy ${i}`,
  content: `Rotating keys, note ${i}: rotate a key from the dashboard before it expires.`,
  metadata: Object.fromEntries(Array.from({ length: 10 }, (_, j) => [`field${j}`, `${i}-${j}-`.padEnd(780, 'm')])),
}));
const SEARCH = { query: 'rotate a key', top_k: 10 };

describe('the idempotency store is bounded', () => {
  let test: TestApp;

  const keyed = (as: SignedInUser, path: string, key: string, body: object) =>
    test.http().post(path).set(as.auth).set('Idempotency-Key', key).send(body);
  const usageOf = async (as: SignedInUser) => {
    const organizationId = await organizationIdOf(test, as.id);
    const { rows } = await test.db.query(
      `SELECT coalesce((SELECT bytes FROM idempotency_usage WHERE organization_id = $1), 0)::int AS counted,
              (SELECT coalesce(sum(stored_bytes), 0) FROM idempotency_keys WHERE organization_id = $1)::int AS rows_sum,
              (SELECT coalesce(sum(octet_length(response_body)), 0) FROM idempotency_keys WHERE organization_id = $1)::int AS bodies,
              (SELECT count(*) FROM idempotency_keys WHERE organization_id = $1)::int AS row_count`,
      [organizationId],
    );
    return rows[0] as { counted: number; rows_sum: number; bodies: number; row_count: number };
  };
  const documentsTitled = async (title: string) =>
    (await test.db.query('SELECT count(*)::int AS n FROM documents WHERE title = $1', [title])).rows[0].n as number;
  const withHeavyDocuments = async () => {
    const user = await signUp(test);
    await test.http().post('/v1/documents/batch/').set(user.auth).send({ documents: HEAVY_DOCUMENTS }).expect(201);
    return user;
  };
  /** Searches with fresh keys until the store refuses one; answers the keys that were stored. */
  const fillStore = async (user: SignedInUser) => {
    const stored: string[] = [];
    for (let i = 0; i < 40; i++) {
      const key = freshKey();
      const answer = await keyed(user, '/v1/search/', key, SEARCH);
      if (answer.status === 429) return stored;
      expect(answer.status).toBe(200);
      stored.push(key);
    }
    throw new Error('the store never filled');
  };
  const expireAllOf = async (user: SignedInUser) =>
    test.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1`, [
      await organizationIdOf(test, user.id),
    ]);

  beforeAll(async () => {
    test = await startTestApp({ IDEMPOTENCY_ORG_BUDGET_MB: String(BUDGET_MB) });
  });
  afterAll(() => test.close());

  it('keeps what one organization stores within its budget under a flood of ~80 KB answers from 8 connections', async () => {
    const user = await withHeavyDocuments();
    const probe = await test.http().post('/v1/search/').set(user.auth).send(SEARCH).expect(200);
    const answerBytes = JSON.stringify(probe.body).length;
    expect(answerBytes).toBeGreaterThan(75_000);

    const statuses: number[] = [];
    const answeredKeys: string[] = [];
    const connection = async () => {
      for (let i = 0; i < 8; i++) {
        const key = freshKey();
        const answer = await keyed(user, '/v1/search/', key, SEARCH);
        statuses.push(answer.status);
        if (answer.status === 429) expect(answer.body).toEqual(STORE_FULL);
        else answeredKeys.push(key);
      }
    };
    await Promise.all(Array.from({ length: 8 }, connection));

    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // 64 answers of ~80 KB (5 MB) were asked for: about 13 fit in 1 MB. Those admitted while the
    // store still had room but answered when it had none were sent and not kept; the rest were refused.
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(10);
    const { rows: kept } = await test.db.query(
      `SELECT key FROM idempotency_keys WHERE key = ANY($1) AND not_kept IS NULL ORDER BY created_at`,
      [answeredKeys],
    );
    expect(kept.length).toBeGreaterThanOrEqual(5);
    expect(kept.length).toBeLessThanOrEqual(Math.floor(BUDGET / answerBytes));
    const usage = await usageOf(user);
    expect(usage.bodies).toBeLessThanOrEqual(BUDGET);
    expect(usage.counted).toBe(usage.rows_sum);
    expect(usage.counted).toBeLessThanOrEqual(BUDGET + IN_FLIGHT_SLACK);
    expect(usage.counted).toBeGreaterThan(BUDGET - 200_000);

    // The answers it kept are still replayed, store full or not; another organization is not affected.
    const replay = await keyed(user, '/v1/search/', kept[0].key as string, SEARCH).expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const other = await signUp(test);
    await keyed(other, '/v1/documents/', freshKey(), { title: 'other organization', content: 'x' }).expect(201);
  });

  it('refuses a new key with 429 before running it while the store is full, and runs it once the purge has freed space', async () => {
    const user = await withHeavyDocuments();
    await fillStore(user);
    const key = freshKey();
    const document = { title: 'refused while full', content: 'x' };
    const refused = await keyed(user, '/v1/documents/', key, document).expect(429, STORE_FULL);
    expect(refused.headers['retry-after']).toBe('60');
    expect(await documentsTitled('refused while full')).toBe(0);
    // Without a key the same request is not refused.
    await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .send({ title: 'sent without key', content: 'x' })
      .expect(201);

    await expireAllOf(user);
    await test.app.get(IdempotencyKeyPurger).purgeExpired();
    expect(await usageOf(user)).toEqual({ counted: 0, rows_sum: 0, bodies: 0, row_count: 0 });
    const created = await keyed(user, '/v1/documents/', key, document).expect(201);
    const replay = await keyed(user, '/v1/documents/', key, document).expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(created.body);
    expect(await documentsTitled('refused while full')).toBe(1);
  });

  it('sends an answer the budget cannot take once, and refuses its replay with 410 instead of running it again', async () => {
    const user = await signUp(test);
    const organizationId = await organizationIdOf(test, user.id);
    // A budget spent but for a few bytes: the key is admitted, its answer does not fit.
    await test.db.query(`INSERT INTO idempotency_usage (organization_id, bytes) VALUES ($1, $2)`, [
      organizationId,
      BUDGET - 10,
    ]);
    const key = freshKey();
    const document = { title: 'not kept', content: 'x' };
    const first = await keyed(user, '/v1/documents/', key, document).expect(201);
    expect(first.body.title).toBe('not kept');
    const retry = await keyed(user, '/v1/documents/', key, document).expect(410);
    expect(retry.body).toEqual(notKept("the organization's Idempotency-Key store was full"));
    expect(await documentsTitled('not kept')).toBe(1);
    const { rows } = await test.db.query('SELECT response_body, not_kept FROM idempotency_keys WHERE key = $1', [key]);
    expect(rows).toEqual([{ response_body: null, not_kept: 'store_full' }]);
    // The same key with another request is still a 422.
    await keyed(user, '/v1/documents/', key, { title: 'other', content: 'x' }).expect(422);
    // Since an answer did not fit, the store counts as full: a new key is refused before it runs.
    await keyed(user, '/v1/documents/', freshKey(), { title: 'after not kept', content: 'x' }).expect(429, STORE_FULL);
    expect(await documentsTitled('after not kept')).toBe(0);
  });

  it('deletes every expired row in one purge, far past the 20,000 a run used to stop at, and gives the bytes back', async () => {
    const user = await signUp(test);
    const organizationId = await organizationIdOf(test, user.id);
    await test.db.query(
      `INSERT INTO idempotency_keys (organization_id, key, request_hash, claim_id, claimed_until, response_status,
                                     response_body, stored_bytes, expires_at)
       SELECT $1, 'flood-' || i, repeat('0', 64), gen_random_uuid(), now(), 200, '{}', 300, now() - interval '1 second'
         FROM generate_series(1, 25000) AS i`,
      [organizationId],
    );
    await test.db.query(`INSERT INTO idempotency_usage (organization_id, bytes) VALUES ($1, 25000 * 300)`, [
      organizationId,
    ]);
    expect(await test.app.get(IdempotencyKeyPurger).purgeExpired()).toBeGreaterThanOrEqual(25_000);
    expect(await usageOf(user)).toEqual({ counted: 0, rows_sum: 0, bodies: 0, row_count: 0 });
  });

  it('clips a value echoed in an error to 64 characters: a 6.7 KB role in 100 messages is not sent back (or stored) in full', async () => {
    const user = await signUp(test);
    const role = 'x'.repeat(6_700);
    const messages = [
      ...Array.from({ length: 99 }, () => ({ role, content: 'hello' })),
      { role: 'user', content: 'hi' },
    ];
    const key = freshKey();
    const refused = await keyed(user, '/v1/chat/completions', key, { model: 'private', messages }).expect(400);
    const detail = `messages.0.role: "${'x'.repeat(64)}…" is not a valid choice.`;
    expect(refused.body.detail).toBe(detail);
    expect(refused.body.error.message).toBe(detail);
    expect(refused.text.length).toBeLessThan(20_000);
    const { rows } = await test.db.query(
      'SELECT octet_length(response_body) AS n FROM idempotency_keys WHERE key = $1',
      [key],
    );
    expect(rows[0].n).toBeLessThan(20_000);

    const field = 'f'.repeat(6_700);
    const filtered = await test
      .http()
      .post('/v1/search/')
      .set(user.auth)
      .send({ query: 'x', filter: { [field]: 1 } })
      .expect(400);
    expect(filtered.body.detail).toBe(`filter: "${'f'.repeat(64)}…": Field names are 1 to 100 characters long.`);
  });
});

describe('an answer larger than IDEMPOTENCY_MAX_ANSWER_KB', () => {
  let test: TestApp;

  beforeAll(async () => {
    test = await startTestApp({ IDEMPOTENCY_MAX_ANSWER_KB: '1' });
    // Metadata on every source: an answer takes a few KB.
    await createDomain(
      test,
      'handbook',
      HANDBOOK.map((document) => ({ ...document, metadata: { notes: 'n'.repeat(1000) } })),
    );
  });
  afterAll(() => test.close());

  it('is sent in full the first time; its replay is refused with 410, not run or charged again', async () => {
    const user = await signUp(test);
    const key = freshKey();
    const ask = () =>
      test
        .http()
        .post('/v1/query/')
        .set(user.auth)
        .set('Idempotency-Key', key)
        .send({ query: 'How do I rotate an API key?', domain: 'handbook' });
    const first = await ask().expect(200);
    expect(first.text.length).toBeGreaterThan(1024);
    expect(first.body.answer).toEqual(expect.any(String));
    expect(await creditsUsed(test, user.id)).toBe(1);
    const retry = await ask().expect(410);
    expect(retry.body).toEqual(notKept('it was larger than 1 KB'));
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await creditsUsed(test, user.id)).toBe(1);
    const { rows } = await test.db.query('SELECT response_status, response_body, not_kept FROM idempotency_keys');
    expect(rows).toEqual([{ response_status: 200, response_body: null, not_kept: 'too_large' }]);
  });
});
