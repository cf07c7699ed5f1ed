import OpenAI, { toFile } from 'openai';
import { CollectionPurger } from '../../src/collections/collection-purger.js';
import { AttachQueue } from '../../src/openai-compat/attach-queue.js';
import { ATTACH_LEASE_MS, AttachWorker } from '../../src/openai-compat/attach-worker.js';
import { createKey, signUp, startTestApp, type TestApp } from '../support/app.js';
import { connect, createTestDatabase, type TestDatabase } from '../support/database.js';

/** What the client saw of one vector-store file, answer by answer (the attach's, then each poll's). */
interface Seen {
  method: string;
  status?: string;
  pollAfter: string | null;
}

/** The official client pointed at the service, recording every vector-store file it is answered. */
function recordingClient(test: TestApp, apiKey: string) {
  const seen: Seen[] = [];
  const client = new OpenAI({
    baseURL: `${test.url}/v1`,
    apiKey,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(url, init);
      if (/\/vector_stores\/[^/]+\/files/.test(url instanceof Request ? url.url : url.toString())) {
        const body = (await response.clone().json()) as { object?: string; status?: string };
        if (body.object === 'vector_store.file')
          seen.push({
            method: init?.method ?? 'GET',
            status: body.status,
            pollAfter: response.headers.get('openai-poll-after-ms'),
          });
      }
      return response;
    },
  });
  return { client, seen };
}

/** Some 4 MB of varied text: long enough to extract, chunk and index that a poll sees it `in_progress`. */
function largeText(): Buffer {
  const words = ['leave', 'holiday', 'expense', 'receipt', 'policy', 'travel', 'office', 'laptop', 'security'];
  const lines: string[] = [];
  for (let i = 0; lines.length < 40_000; i++)
    lines.push(`Rule ${i}: ${words[i % 9]} ${words[(i * 7) % 9]} must follow section ${i % 97} of the handbook.`);
  return Buffer.from(lines.join('\n'));
}

const documentsOf = async (test: TestApp, collectionId: string) =>
  (
    await test.db.query<{ documents: number; chunks: number }>(
      `SELECT (SELECT count(*)::int FROM documents WHERE collection_id = $1) AS documents,
              (SELECT count(*)::int FROM document_chunks c JOIN documents d ON d.id = c.document_id
                WHERE d.collection_id = $1) AS chunks`,
      [collectionId],
    )
  ).rows[0];

/** Waits until no file of the collections (of any, when none is named) is `in_progress` and this instance indexes nothing. */
async function settled(test: TestApp, ...collectionIds: string[]): Promise<void> {
  const worker = test.app.get(AttachWorker);
  for (let i = 0; i < 300; i++) {
    await worker.idle();
    const { rows } = await test.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM vector_store_files
        WHERE status = 'in_progress' AND (cardinality($1::uuid[]) = 0 OR collection_id = ANY($1))`,
      [collectionIds],
    );
    if (rows[0].n === 0) {
      await worker.idle();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('files still in_progress');
}

describe('attaching a file to a vector store is asynchronous, as OpenAI’s is', () => {
  let test: TestApp;
  let openai: ReturnType<typeof recordingClient>;
  let key: string;

  beforeAll(async () => {
    test = await startTestApp();
    key = (await createKey(test, await signUp(test))).key;
    openai = recordingClient(test, key);
  });
  afterAll(() => test.close());

  it('createAndPoll: the attach answers in_progress at once, a poll sees in_progress, then completed and searchable', async () => {
    const store = await openai.client.vectorStores.create({ name: 'Large handbook' });
    const file = await openai.client.files.create({
      file: await toFile(largeText(), 'handbook.txt'),
      purpose: 'assistants',
    });
    openai.seen.length = 0;
    const started = Date.now();
    const attached = await openai.client.vectorStores.files.createAndPoll(store.id, {
      file_id: file.id,
      attributes: { kind: 'handbook' },
    });
    expect(attached).toMatchObject({
      id: file.id,
      status: 'completed',
      last_error: null,
      attributes: { kind: 'handbook' },
    });
    expect(attached.usage_bytes).toBe(file.bytes);
    expect(openai.seen[0]).toEqual({ method: 'POST', status: 'in_progress', pollAfter: null });
    const polls = openai.seen.slice(1);
    expect(polls.some((poll) => poll.status === 'in_progress')).toBe(true);
    // Each in_progress answer tells the client to poll again soon (it would otherwise wait 5 s).
    for (const poll of polls.filter((one) => one.status === 'in_progress')) expect(poll.pollAfter).toBe('500');
    expect(polls.at(-1)).toEqual({ method: 'GET', status: 'completed', pollAfter: null });
    expect(Date.now() - started).toBeLessThan(60_000);

    const results = await openai.client.vectorStores.search(store.id, { query: 'laptop security section 42' });
    expect(results.data[0]).toMatchObject({
      file_id: file.id,
      filename: 'handbook.txt',
      attributes: { kind: 'handbook' },
    });
    expect((await openai.client.vectorStores.retrieve(store.id)).file_counts).toMatchObject({
      in_progress: 0,
      completed: 1,
      total: 1,
    });
  });

  it('a file of an unsupported type answers in_progress, then ends failed with a reason', async () => {
    const store = await openai.client.vectorStores.create({ name: 'Binary' });
    const file = await openai.client.files.create({
      file: await toFile(Buffer.from('%PDF-1.7 not really'), 'scan.pdf'),
      purpose: 'assistants',
    });
    openai.seen.length = 0;
    const attached = await openai.client.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
    expect(openai.seen[0]).toMatchObject({ method: 'POST', status: 'in_progress' });
    expect(attached.status).toBe('failed');
    expect(attached.last_error).toEqual({ code: 'invalid_file', message: expect.stringMatching(/PDF|read/) as string });
    expect(await documentsOf(test, store.id)).toEqual({ documents: 0, chunks: 0 });
    const zip = await openai.client.files.create({
      file: await toFile(Buffer.from('PK'), 'a.zip'),
      purpose: 'assistants',
    });
    const refused = await openai.client.vectorStores.files.createAndPoll(store.id, { file_id: zip.id });
    expect(refused.last_error).toEqual({
      code: 'unsupported_file',
      message: 'Unsupported file type "a.zip". Attach plain text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).',
    });
  });

  it('detaching, deleting the file or deleting the store while the file is indexed leaves no document or chunk', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    for (const undo of ['detach', 'delete file', 'delete store'] as const) {
      const store = await openai.client.vectorStores.create({ name: `Undone by ${undo}` });
      const file = await openai.client.files.create({
        file: await toFile(largeText(), 'big.txt'),
        purpose: 'assistants',
      });
      const attached = await test
        .http()
        .post(`/v1/vector_stores/${store.id}/files`)
        .set(auth)
        .send({ file_id: file.id })
        .expect(201);
      expect(attached.body.status).toBe('in_progress');
      if (undo === 'detach')
        await test.http().delete(`/v1/vector_stores/${store.id}/files/${file.id}`).set(auth).expect(200);
      if (undo === 'delete file') await test.http().delete(`/v1/files/${file.id}`).set(auth).expect(200);
      if (undo === 'delete store') await test.http().delete(`/v1/vector_stores/${store.id}`).set(auth).expect(200);
      await settled(test);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await settled(test);
      await test.app.get(CollectionPurger).idle();
      expect(await documentsOf(test, store.id)).toEqual({ documents: 0, chunks: 0 });
      const rows = await test.db.query(`SELECT 1 FROM vector_store_files WHERE collection_id = $1`, [store.id]);
      expect(rows.rows).toEqual([]);
    }
  });

  it('deleting the document a file became (DELETE /v1/documents/{id}) takes the file out of its vector store; the file stays', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const store = await openai.client.vectorStores.create({ name: 'Document deleted' });
    const file = await openai.client.files.create({
      file: await toFile(Buffer.from('Parking is free on weekends.'), 'parking.txt'),
      purpose: 'assistants',
    });
    await openai.client.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
    const listed = await test.http().get(`/v1/documents/?collection_id=${store.id}`).set(auth).expect(200);
    expect(listed.body.results).toHaveLength(1);
    await test
      .http()
      .delete(`/v1/documents/${listed.body.results[0].id as string}/`)
      .set(auth)
      .expect(204);

    const gone = await test.http().get(`/v1/vector_stores/${store.id}/files/${file.id}`).set(auth).expect(404);
    expect(gone.body.detail).toBe(`File ${JSON.stringify(file.id)} not found.`);
    expect((await openai.client.vectorStores.retrieve(store.id)).file_counts).toMatchObject({ completed: 0, total: 0 });
    expect((await openai.client.vectorStores.search(store.id, { query: 'parking' })).data).toEqual([]);
    expect(await openai.client.files.retrieve(file.id)).toMatchObject({ id: file.id, filename: 'parking.txt' });
    // Attached again, it is indexed again.
    expect((await openai.client.vectorStores.files.createAndPoll(store.id, { file_id: file.id })).status).toBe(
      'completed',
    );
  });

  it('attaching a file again while it is indexed: one document, the second outcome', async () => {
    const store = await openai.client.vectorStores.create({ name: 'Twice' });
    const file = await openai.client.files.create({
      file: await toFile(largeText(), 'twice.txt'),
      purpose: 'assistants',
    });
    await openai.client.vectorStores.files.create(store.id, { file_id: file.id, attributes: { round: 1 } });
    const second = await openai.client.vectorStores.files.createAndPoll(store.id, {
      file_id: file.id,
      attributes: { round: 2 },
    });
    expect(second).toMatchObject({ status: 'completed', attributes: { round: 2 } });
    await settled(test, store.id);
    expect((await documentsOf(test, store.id)).documents).toBe(1);
    const metadata = await test.db.query(`SELECT metadata FROM documents WHERE collection_id = $1`, [store.id]);
    expect(metadata.rows).toEqual([{ metadata: { round: 2 } }]);
  });
});

describe('the attach queue: bounded, fair between organizations, and surviving a restart', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  // Several tests queue files with no worker and leave them: each test starts with an empty queue, so that
  // what it claims, and how long its worker takes, does not depend on the tests before it.
  // (The first test's boot creates the tables.)
  beforeEach(async () => {
    const db = await connect(database.url);
    try {
      const { rows } = await db.query(`SELECT to_regclass('vector_store_files') IS NOT NULL AS migrated`);
      if (rows[0].migrated) await db.query(`DELETE FROM vector_store_files WHERE status = 'in_progress'`);
    } finally {
      await db.end();
    }
  });

  const upload = async (test: TestApp, auth: string, name: string, text: string) =>
    (
      await test
        .http()
        .post('/v1/files')
        .set('Authorization', auth)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from(text), { filename: name, contentType: 'text/plain' })
        .expect(201)
    ).body.id as string;
  const storeOf = async (test: TestApp, auth: string, name: string) =>
    (await test.http().post('/v1/vector_stores').set('Authorization', auth).send({ name }).expect(201)).body
      .id as string;
  const attach = (test: TestApp, auth: string, store: string, file: string) =>
    test.http().post(`/v1/vector_stores/${store}/files`).set('Authorization', auth).send({ file_id: file });

  it('files left in_progress by a stopped instance are indexed after a restart, or failed when they kept being interrupted', async () => {
    // An instance without attach workers: its attaches wait in the queue.
    const first = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    const auth = `Bearer ${(await createKey(first, await signUp(first))).key}`;
    const store = await storeOf(first, auth, 'Restart');
    const waiting = await upload(first, auth, 'waiting.txt', 'Waiting for a worker: the restart picks me up.');
    const interrupted = await upload(first, auth, 'interrupted.txt', 'A worker died while reading me.');
    const crashing = await upload(first, auth, 'crashing.txt', 'Every worker dies reading me.');
    for (const file of [waiting, interrupted, crashing]) {
      const answer = await attach(first, auth, store, file).expect(201);
      expect(answer.body).toMatchObject({
        id: file,
        object: 'vector_store.file',
        status: 'in_progress',
        last_error: null,
      });
    }
    const counted = await first.http().get(`/v1/vector_stores/${store}`).set('Authorization', auth).expect(200);
    expect(counted.body).toMatchObject({
      status: 'in_progress',
      file_counts: { in_progress: 3, completed: 0, total: 3 },
    });
    const listed = await first
      .http()
      .get(`/v1/vector_stores/${store}/files?filter=in_progress`)
      .set('Authorization', auth)
      .expect(200);
    expect(listed.body.data).toHaveLength(3);
    // A dead worker's claims: leases that ran out, one after its first attempt, one after its last.
    await first.db.query(
      `UPDATE vector_store_files SET claim = gen_random_uuid(), claimed_until = now() - interval '1 second',
              attempts = CASE file_id WHEN $1 THEN 1 ELSE 3 END
        WHERE file_id IN ($1, $2)`,
      [interrupted, crashing],
    );
    await first.close();

    const second = await startTestApp({}, database);
    try {
      await settled(second, store);
      const files = await second.http().get(`/v1/vector_stores/${store}/files`).set('Authorization', auth).expect(200);
      const byId = Object.fromEntries(
        (files.body.data as { id: string; status: string; last_error: unknown }[]).map((f) => [f.id, f]),
      );
      expect(byId[waiting]).toMatchObject({ status: 'completed', last_error: null });
      expect(byId[interrupted]).toMatchObject({ status: 'completed', last_error: null });
      expect(byId[crashing]).toMatchObject({
        status: 'failed',
        last_error: {
          code: 'server_error',
          message:
            'Indexing was interrupted 3 times (the service restarted or stopped while reading the file); attach the file again.',
        },
      });
      expect(await documentsOf(second, store)).toMatchObject({ documents: 2 });
    } finally {
      await second.close();
    }
  });

  it('at most 2 files of one organization are claimed at once; another organization takes its turn first', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    try {
      const busy = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const other = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, busy, 'Busy');
      for (let i = 0; i < 3; i++)
        await attach(test, busy, store, await upload(test, busy, `busy-${i}.txt`, `Busy file ${i}.`)).expect(201);
      const otherStore = await storeOf(test, other, 'Other');
      const otherFile = await upload(test, other, 'other.txt', 'Not held back.');
      await attach(test, other, otherStore, otherFile).expect(201);

      const queue = test.app.get(AttachQueue);
      const claimed = [];
      for (let i = 0; i < 5; i++) claimed.push(await queue.claim(2, ATTACH_LEASE_MS));
      const stores = claimed.map((job) => job?.collection_id ?? null);
      // The busy organization's oldest first, then the one with fewer files being indexed.
      expect(stores).toEqual([store, otherStore, store, null, null]);
      // A claim released (its file was refused, say): the third file of the busy organization is due.
      await queue.recordFailed(claimed[0]!, { code: 'invalid_file', message: 'test' });
      expect((await queue.claim(2, ATTACH_LEASE_MS))?.collection_id).toBe(store);
    } finally {
      await test.close();
    }
  });

  it('the turns go round: a third organization is served before two older backlogs take another turn', async () => {
    const own = await createTestDatabase();
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, own);
    try {
      const stores: string[] = [];
      for (const [name, files] of [
        ['A', 3],
        ['B', 3],
        ['C', 1],
      ] as const) {
        const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
        const store = await storeOf(test, auth, name);
        for (let i = 0; i < files; i++)
          await attach(test, auth, store, await upload(test, auth, `${name}-${i}.txt`, `File ${i} of ${name}.`)).expect(
            201,
          );
        stores.push(store);
      }
      const queue = test.app.get(AttachQueue);
      const served: (string | undefined)[] = [];
      for (let i = 0; i < 4; i++) {
        const job = await queue.claim(2, ATTACH_LEASE_MS);
        served.push(job?.collection_id);
        // Done at once (as a refusal): no organization has a file being indexed at the next claim.
        if (job) await queue.recordFailed(job, { code: 'invalid_file', message: 'test' });
      }
      expect(served).toEqual([stores[0], stores[1], stores[2], stores[0]]);
    } finally {
      await test.close();
      await own.drop();
    }
  });

  it('a held row of the organization whose turn it is does not stall the queue: the next organization’s file is claimed', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    const holder = await connect(database.url);
    try {
      const first = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const second = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const firstStore = await storeOf(test, first, 'Held');
      const firstFile = await upload(test, first, 'held.txt', 'Held by another transaction.');
      await attach(test, first, firstStore, firstFile).expect(201);
      const secondStore = await storeOf(test, second, 'Next');
      await attach(test, second, secondStore, await upload(test, second, 'next.txt', 'Next in turn.')).expect(201);

      // The first organization's only due file, held (a detach deciding, a file being deleted...).
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM vector_store_files WHERE file_id = $1 FOR UPDATE`, [firstFile]);
      const queue = test.app.get(AttachQueue);
      expect((await queue.claim(2, ATTACH_LEASE_MS))?.collection_id).toBe(secondStore);
      await holder.query('COMMIT');
      expect((await queue.claim(2, ATTACH_LEASE_MS))?.collection_id).toBe(firstStore);
    } finally {
      await holder.end();
      await test.close();
    }
  });

  it('a burst of attaches waits its turn without taking the pool: no 503, and another organization is served meanwhile', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0', DATABASE_POOL_SIZE: '4' }, database);
    try {
      const bursting = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const other = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, bursting, 'Burst');
      const files: string[] = [];
      for (let i = 0; i < 150; i++) files.push(await upload(test, bursting, `burst-${i}.txt`, `Burst file ${i}.`));
      const otherStore = await storeOf(test, other, 'Bystander');
      // The organization's files_usage row held for longer than a request waits for a pooled connection
      // (a slow attach): every attach of the burst waits for it.
      const holder = await connect(database.url);
      await holder.query('BEGIN');
      await holder.query(
        `SELECT 1 FROM files_usage WHERE organization_id = (SELECT organization_id FROM collections WHERE id = $1) FOR UPDATE`,
        [store],
      );
      const burst = Promise.all(files.map((file) => Promise.resolve(attach(test, bursting, store, file))));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const bystander = await Promise.all(
        Array.from({ length: 10 }, () =>
          Promise.resolve(test.http().get(`/v1/vector_stores/${otherStore}`).set('Authorization', other)),
        ),
      );
      expect(bystander.map((response) => response.status)).toEqual(Array(10).fill(200));
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await holder.query('COMMIT');
      await holder.end();
      const statuses = (await burst).map((response) => response.status);
      // At most 2 run and 100 wait per organization on an instance; the rest are told to retry in a second.
      expect(statuses.filter((status) => status !== 201 && status !== 429)).toEqual([]);
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(102);
      const refused = (await burst).find((response) => response.status === 429);
      if (refused) {
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.body.error.message).toBe(
          'Too many attach, detach or file deletion requests from your organization at once (100 waiting); retry in a second.',
        );
      }
    } finally {
      await test.close();
    }
  });

  it('one organization’s backlog does not hold another’s file back: it is indexed before most of the backlog', async () => {
    const queuing = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    const busy = `Bearer ${(await createKey(queuing, await signUp(queuing))).key}`;
    const other = `Bearer ${(await createKey(queuing, await signUp(queuing))).key}`;
    const store = await storeOf(queuing, busy, 'Backlog');
    for (let i = 0; i < 30; i++)
      await attach(queuing, busy, store, await upload(queuing, busy, `backlog-${i}.txt`, `Backlog file ${i}.`)).expect(
        201,
      );
    const otherStore = await storeOf(queuing, other, 'Small');
    await attach(queuing, other, otherStore, await upload(queuing, other, 'small.txt', 'One small file.')).expect(201);
    await queuing.close();

    const working = await startTestApp({}, database);
    try {
      await settled(working, store, otherStore);
      // Each file became a document when it was indexed: the other organization's among the first.
      const { rows } = await working.db.query<{ collection_id: string }>(
        `SELECT collection_id FROM documents WHERE collection_id IN ($1, $2) ORDER BY created_at`,
        [store, otherStore],
      );
      expect(rows).toHaveLength(31);
      expect(rows.findIndex((row) => row.collection_id === otherStore)).toBeLessThan(4);
    } finally {
      await working.close();
    }
    // Two boots and 31 files uploaded, attached and indexed: about 4 s alone; CI's two cores are shared with
    // another suite and Chromium.
  }, 90_000);

  it('a file that fails while it is stored fails at once, saying why, not as 3 interruptions', async () => {
    const test = await startTestApp({}, database);
    // What a 10 MB file of unique words did: the statement storing its document ran out of time.
    await test.db.query(`
      CREATE FUNCTION qfix_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.title = 'poison.txt' THEN
          RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = '57014';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER qfix_poison BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION qfix_poison()`);
    try {
      const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, auth, 'Poison');
      const poison = await upload(test, auth, 'poison.txt', 'Too much to index in one statement.');
      const fine = await upload(test, auth, 'fine.txt', 'Indexed as usual.');
      await attach(test, auth, store, poison).expect(201);
      await attach(test, auth, store, fine).expect(201);
      await settled(test, store);
      const failed = await test.http().get(`/v1/vector_stores/${store}/files/${poison}`).set('Authorization', auth);
      expect(failed.body).toMatchObject({
        status: 'failed',
        last_error: {
          code: 'server_error',
          message:
            'Indexing took longer than the database allows for one step (15 s): the file may hold too many distinct words or passages to index at once, or the database was busy; attach it again, and split it into smaller files if it fails again.',
        },
      });
      const attempts = await test.db.query(`SELECT attempts FROM vector_store_files WHERE file_id = $1`, [poison]);
      expect(attempts.rows).toEqual([{ attempts: 1 }]);
      const indexed = await test.http().get(`/v1/vector_stores/${store}/files/${fine}`).set('Authorization', auth);
      expect(indexed.body).toMatchObject({ status: 'completed', last_error: null });
    } finally {
      await test.db.query(`DROP TRIGGER qfix_poison ON documents; DROP FUNCTION qfix_poison()`);
      await test.close();
    }
  });

  it('a lease is renewed while the row is held by a transaction (the worker storing the document), not blocked behind it', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    const holder = await connect(database.url);
    try {
      const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, auth, 'Held');
      await attach(test, auth, store, await upload(test, auth, 'held.txt', 'Held while stored.')).expect(201);
      const queue = test.app.get(AttachQueue);
      const job = (await queue.claim(2, ATTACH_LEASE_MS))!;
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM vector_store_files WHERE collection_id = $1 AND file_id = $2 FOR UPDATE`, [
        job.collection_id,
        job.file_id,
      ]);
      const renewed = await Promise.race([
        queue.renew(job, ATTACH_LEASE_MS),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 3 s'), 3_000)),
      ]);
      expect(renewed).toBe(true);
      await holder.query('ROLLBACK');
      // Once the claim is lost (the file attached again), renewing says so.
      await attach(test, auth, store, job.file_id).expect(201);
      expect(await queue.renew(job, ATTACH_LEASE_MS)).toBe(false);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await test.close();
    }
  });

  it('concurrent attaches of one file to one store all succeed: no deadlock, no 500', async () => {
    const test = await startTestApp({}, database);
    try {
      const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const statuses: Record<number, number> = {};
      const stores: string[] = [];
      for (let round = 0; round < 5; round++) {
        const store = await storeOf(test, auth, `Race ${round}`);
        stores.push(store);
        const file = await upload(test, auth, 'race.txt', `Deadlock papaya ${round}.`);
        const answers = await Promise.all(Array.from({ length: 8 }, () => attach(test, auth, store, file)));
        for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      }
      expect(statuses).toEqual({ 201: 40 });
      await settled(test, ...stores);
    } finally {
      await test.close();
    }
  });

  it('a burst of attaches past the 1,000 waiting files is refused past the bound, exactly: 429, never 500', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    try {
      const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, auth, 'Burst');
      await test.db.query(
        `WITH made AS (
           INSERT INTO files (organization_id, filename, mimetype, purpose, bytes, content)
           SELECT organization_id, 'queued-' || n || '.txt', 'text/plain', 'assistants', 1, 'x'::bytea
             FROM collections, generate_series(1, 990) n WHERE id = $1
           RETURNING id, organization_id)
         INSERT INTO vector_store_files (collection_id, file_id, organization_id, status)
         SELECT $1, id, organization_id, 'in_progress' FROM made`,
        [store],
      );
      const files = [];
      for (let i = 0; i < 30; i++) files.push(await upload(test, auth, `burst-${i}.txt`, `Burst ${i}.`));
      const answers = await Promise.all(files.map((file) => attach(test, auth, store, file)));
      const statuses: Record<number, number> = {};
      for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      expect(statuses).toEqual({ 201: 10, 429: 20 });
      const queued = await test.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM vector_store_files WHERE collection_id = $1 AND status = 'in_progress'`,
        [store],
      );
      expect(queued.rows[0].n).toBe(1000);
    } finally {
      await test.close();
    }
  });

  it('an organization with 1,000 files waiting is refused the next attach: 429 in OpenAI’s shape, nothing queued', async () => {
    const test = await startTestApp({ ATTACH_WORKERS: '0' }, database);
    try {
      const auth = `Bearer ${(await createKey(test, await signUp(test))).key}`;
      const store = await storeOf(test, auth, 'Full queue');
      const file = await upload(test, auth, 'one-more.txt', 'One more.');
      await test.db.query(
        `WITH made AS (
           INSERT INTO files (organization_id, filename, mimetype, purpose, bytes, content)
           SELECT organization_id, 'queued-' || n || '.txt', 'text/plain', 'assistants', 1, 'x'::bytea
             FROM collections, generate_series(1, 1000) n WHERE id = $1
           RETURNING id, organization_id)
         INSERT INTO vector_store_files (collection_id, file_id, organization_id, status)
         SELECT $1, id, organization_id, 'in_progress' FROM made`,
        [store],
      );
      const refused = await attach(test, auth, store, file).expect(429);
      const message =
        'Your organization already has 1000 files waiting to be indexed in vector stores (the most it may); attach more once some are done.';
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body).toEqual({
        detail: message,
        error: { message, type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
      });
      const row = await test.db.query(`SELECT 1 FROM vector_store_files WHERE file_id = $1`, [file]);
      expect(row.rows).toEqual([]);
    } finally {
      await test.close();
    }
  });
});
