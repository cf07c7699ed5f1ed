import { jest } from '@jest/globals';
import { IdempotencyKeyPurger } from '../../src/idempotency/idempotency-key-purger.js';
import { IdempotentStreams } from '../../src/idempotency/idempotency.service.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { sleep } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { collectText, createDomain, HANDBOOK, organizationIdOf } from '../support/knowledge.js';

const INVALID_KEY = { detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters.' };
const REUSED = { detail: 'This Idempotency-Key was already used with a different request.' };
const IN_PROGRESS = { detail: 'A request with this Idempotency-Key is still in progress.' };
const QUESTION = { query: 'How do I rotate an API key?', domain: 'handbook' };

let counter = 0;
const freshKey = () => `key-${Date.now()}-${++counter}`;

/**
 * Makes the next document inserts slow or failing, from inside PostgreSQL: a trigger reads the mode
 * from a one-row table ('slow': 1.5 s, 'boom': an error (500), 'down': "cannot connect now" (503)).
 */
async function installFaults(test: TestApp): Promise<(mode: 'none' | 'slow' | 'boom' | 'down') => Promise<void>> {
  await test.db.query(`CREATE TABLE test_faults (mode text NOT NULL); INSERT INTO test_faults VALUES ('none');
    CREATE FUNCTION test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE m text := (SELECT mode FROM test_faults);
    BEGIN
      IF m = 'slow' THEN PERFORM pg_sleep(1.5); END IF;
      IF m = 'boom' THEN RAISE EXCEPTION 'injected failure'; END IF;
      IF m = 'down' THEN RAISE EXCEPTION 'injected outage' USING ERRCODE = '57P03'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_fault BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION test_fault();`);
  return async (mode) => {
    await test.db.query('UPDATE test_faults SET mode = $1', [mode]);
  };
}

describe('Idempotency-Key on authenticated POSTs', () => {
  let test: TestApp;
  let user: SignedInUser;
  let setFault: Awaited<ReturnType<typeof installFaults>>;

  const post = (path: string, key: string | undefined, body: object, as: SignedInUser = user) => {
    const call = test.http().post(path).set(as.auth);
    return (key === undefined ? call : call.set('Idempotency-Key', key)).send(body);
  };
  const documentsTitled = async (title: string) =>
    (await test.db.query('SELECT count(*)::int AS n FROM documents WHERE title = $1', [title])).rows[0].n as number;
  const creditsUsed = async (as: SignedInUser = user) =>
    (await test.http().get('/v1/billings/subscription/').set(as.auth).expect(200)).body.current_quota
      .credits_used as number;
  const storedRow = async (key: string) =>
    (await test.db.query('SELECT * FROM idempotency_keys WHERE key = $1', [key])).rows[0];

  beforeAll(async () => {
    test = await startTestApp();
    await createDomain(test, 'handbook', HANDBOOK);
    setFault = await installFaults(test);
  });
  afterAll(async () => {
    await test.close();
  });
  beforeEach(async () => {
    await setFault('none');
    user = await signUp(test);
  });

  it('refuses an empty key with 400 naming Idempotency-Key, and runs nothing', async () => {
    await post('/v1/documents/', '', { title: 'empty-key', content: 'x' }).expect(400, INVALID_KEY);
    expect(await documentsTitled('empty-key')).toBe(0);
  });

  it('refuses a key of 256 characters (255 is accepted)', async () => {
    await post('/v1/documents/', 'k'.repeat(256), { title: 'long-key', content: 'x' }).expect(400, INVALID_KEY);
    expect(await documentsTitled('long-key')).toBe(0);
    await post('/v1/documents/', 'k'.repeat(255), { title: 'long-key', content: 'x' }).expect(201);
  });

  it('refuses a non-ASCII key, and one with a space', async () => {
    await post('/v1/documents/', 'clé-1', { title: 'latin-key', content: 'x' }).expect(400, INVALID_KEY);
    await post('/v1/documents/', 'a b', { title: 'latin-key', content: 'x' }).expect(400, INVALID_KEY);
    expect(await documentsTitled('latin-key')).toBe(0);
  });

  it('checks credentials first: a bad key without credentials is a 401', async () => {
    await test.http().post('/v1/documents/').set('Idempotency-Key', '').send({}).expect(401);
  });

  it('refuses a key on a multipart upload with a 400 that says to send JSON', async () => {
    await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .set('Idempotency-Key', freshKey())
      .attach('file', Buffer.from('# Notes\n\nsome text'), 'notes.md')
      .expect(400, {
        detail: 'Idempotency-Key is not accepted on a multipart upload; send the document as JSON to retry it safely.',
      });
  });

  it('replays a query: same status, body and headers, Idempotent-Replayed, charged once', async () => {
    const key = freshKey();
    const first = await post('/v1/query/', key, QUESTION).expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const replay = await post('/v1/query/', key, QUESTION).expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(replay.headers['x-credits-remaining']).toBe(first.headers['x-credits-remaining']);
    expect(replay.headers['x-credits-reset']).toBe(first.headers['x-credits-reset']);
    expect(replay.headers['ratelimit-limit']).toBeDefined();
    expect(await creditsUsed()).toBe(1);
    // The trailing slash is optional on paths, so it is for the key too.
    await post('/v1/query', key, QUESTION).expect(200);
    expect(await creditsUsed()).toBe(1);
  });

  it('replays a created document: one document, the same id', async () => {
    const key = freshKey();
    const first = await post('/v1/documents/', key, { title: 'replayed-doc', content: 'text' }).expect(201);
    const replay = await post('/v1/documents/', key, { title: 'replayed-doc', content: 'text' }).expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await documentsTitled('replayed-doc')).toBe(1);
  });

  it('stores a refusal too: a 400 for a blank query is replayed, not run again', async () => {
    const key = freshKey();
    const first = await post('/v1/query/', key, { query: ' ' }).expect(400);
    const replay = await post('/v1/query/', key, { query: ' ' }).expect(400);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('answers 422 when the key is reused on another route, or with another body', async () => {
    const key = freshKey();
    await post('/v1/documents/', key, { title: 'reused-key', content: 'x' }).expect(201);
    await post('/v1/query/', key, QUESTION).expect(422, REUSED);
    await post('/v1/documents/', key, { title: 'reused-key', content: 'other' }).expect(422, REUSED);
    expect(await documentsTitled('reused-key')).toBe(1);
    expect(await creditsUsed()).toBe(0);
  });

  it("runs another organization's request with the same key as its own, not a replay of the other's", async () => {
    const key = freshKey();
    const other = await signUp(test);
    const mine = await post('/v1/documents/', key, { title: 'org-scoped', content: 'mine' }).expect(201);
    const theirs = await post('/v1/documents/', key, { title: 'org-scoped', content: 'mine' }, other).expect(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
    const owners = await test.db.query('SELECT organization_id FROM documents WHERE title = $1', ['org-scoped']);
    expect(owners.rows.map((row: { organization_id: string }) => row.organization_id).sort()).toEqual(
      [await organizationIdOf(test, user.id), await organizationIdOf(test, other.id)].sort(),
    );
  });

  it('answers 409 while the first request runs, then replays its answer', async () => {
    const key = freshKey();
    await setFault('slow');
    const first = post('/v1/documents/', key, { title: 'in-flight', content: 'x' }).then((response) => response);
    for (let i = 0; i < 100 && !(await storedRow(key)); i++) await sleep(20);
    await post('/v1/documents/', key, { title: 'in-flight', content: 'x' }).expect(409, IN_PROGRESS);
    // Another body is still a reuse, in progress or not.
    await post('/v1/documents/', key, { title: 'in-flight', content: 'y' }).expect(422, REUSED);
    expect((await first).status).toBe(201);
    const replay = await post('/v1/documents/', key, { title: 'in-flight', content: 'x' }).expect(201);
    expect(replay.body).toEqual((await first).body);
    expect(await documentsTitled('in-flight')).toBe(1);
  });

  it('does not store a 500 or a 503: a retry runs again', async () => {
    const key = freshKey();
    const body = { title: 'transient', content: 'x' };
    await setFault('boom');
    await post('/v1/documents/', key, body).expect(500);
    expect(await storedRow(key)).toBeUndefined();
    await setFault('down');
    await post('/v1/documents/', key, body).expect(503);
    expect(await storedRow(key)).toBeUndefined();
    await setFault('none');
    const retry = await post('/v1/documents/', key, body).expect(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await documentsTitled('transient')).toBe(1);
  });

  it('stores a streamed query as its final JSON answer and replays that JSON', async () => {
    const key = freshKey();
    const streamed = await post('/v1/query/', key, { ...QUESTION, stream: true })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    const done = /event: done\ndata: (.*)\n/.exec(streamed.body as string)![1];
    const replay = await post('/v1/query/', key, { ...QUESTION, stream: true }).expect(200);
    expect(replay.headers['content-type']).toMatch(/^application\/json/);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(JSON.parse(done));
    expect(await creditsUsed()).toBe(1);
  });

  it('gives the key back when a streamed answer ends without settling it: the retry runs, never 409', async () => {
    // As if a streaming route forgot to settle its claim: the reply is hijacked, so no onSend hook sees it.
    const forgetful = jest.spyOn(test.app.get(IdempotentStreams), 'settleStreamed').mockResolvedValue();
    const key = freshKey();
    try {
      await post('/v1/query/', key, { ...QUESTION, stream: true })
        .buffer(true)
        .parse(collectText)
        .expect(200);
    } finally {
      forgetful.mockRestore();
    }
    // Given back once the response has closed (not before: the client has its answer first).
    for (let waited = 0; (await storedRow(key)) !== undefined && waited < 5_000; waited += 50) await sleep(50);
    expect(await storedRow(key)).toBeUndefined();
    const retry = await post('/v1/query/', key, QUESTION).expect(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect((await storedRow(key)).response_status).toBe(200);
  });

  it('stores a streamed chat completion as its completion JSON: a retry is replayed, not run or charged again', async () => {
    const key = freshKey();
    const ask = { model: 'handbook', messages: [{ role: 'user', content: QUESTION.query }], stream: true };
    const streamed = await post('/v1/chat/completions', key, ask).buffer(true).parse(collectText).expect(200);
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    const chunks = (streamed.body as string)
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)));
    const last = chunks[chunks.length - 1];
    const text = chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('');
    expect(await creditsUsed()).toBe(1);

    const replay = await post('/v1/chat/completions', key, ask).expect(200);
    expect(replay.headers['content-type']).toMatch(/^application\/json/);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual({
      id: last.id,
      object: 'chat.completion',
      created: last.created,
      model: 'handbook',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: last.usage,
      sources: last.sources,
    });
    expect(await creditsUsed()).toBe(1);
    expect((await storedRow(key)).response_status).toBe(200);
  });

  it('lets a claim whose request died mid-flight lapse: the next request runs', async () => {
    const key = freshKey();
    await post('/v1/documents/', key, { title: 'abandoned', content: 'x' }).expect(201);
    // As if the process had died before answering: in progress, claim run out.
    await test.db.query(
      `UPDATE idempotency_keys SET response_status = NULL, claimed_until = now() - interval '1 second' WHERE key = $1`,
      [key],
    );
    const retry = await post('/v1/documents/', key, { title: 'abandoned', content: 'x' }).expect(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await documentsTitled('abandoned')).toBe(2);
  });

  it('forgets a key after 24 hours, and the purge deletes only expired rows', async () => {
    const expired = freshKey();
    const live = freshKey();
    await post('/v1/documents/', expired, { title: 'expiring', content: 'x' }).expect(201);
    await post('/v1/documents/', live, { title: 'kept', content: 'x' }).expect(201);
    const row = await storedRow(live);
    const hours = (new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()) / 3_600_000;
    expect(hours).toBeCloseTo(24, 3);
    await test.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [
      expired,
    ]);
    expect(await test.app.get(IdempotencyKeyPurger).purgeExpired()).toBe(1);
    expect(await storedRow(expired)).toBeUndefined();
    expect(await storedRow(live)).toBeDefined();
    // Forgotten: the same key runs again.
    await post('/v1/documents/', expired, { title: 'expiring', content: 'x' }).expect(201);
    expect(await documentsTitled('expiring')).toBe(2);
  });
});

/** Two instances on one database, as behind a load balancer, receiving the same key at once. */
describe('Idempotency-Key across two instances', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await startTestApp({}, database);
    b = await startTestApp({}, database);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('executes a request exactly once when its key reaches both at the same moment', async () => {
    const user = await signUp(a);
    for (let round = 0; round < 10; round++) {
      const key = freshKey();
      const title = `twice-${round}`;
      const send = (instance: TestApp) =>
        instance.http().post('/v1/documents/').set(user.auth).set('Idempotency-Key', key).send({ title, content: 'x' });
      const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
      const { rows } = await a.db.query('SELECT count(*)::int AS n FROM documents WHERE title = $1', [title]);
      expect(rows[0].n).toBe(1);
    }
  });
});
