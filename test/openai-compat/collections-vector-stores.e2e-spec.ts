import OpenAI, { toFile } from 'openai';
import { bearer, partnerKey } from '../support/api-keys.js';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';

/** The official client, as an integrator points it at the service. */
const clientFor = (test: TestApp, apiKey: string) => new OpenAI({ baseURL: `${test.url}/v1`, apiKey, maxRetries: 0 });

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
  );

/** OpenAI's vector stores and files over collections, through the official `openai` client. */
describe('OpenAI vector stores (collections) with the official client', () => {
  let test: TestApp;
  let user: SignedInUser;
  let openai: OpenAI;

  beforeAll(async () => {
    test = await startTestApp();
    user = await signUp(test);
    openai = clientFor(test, (await createKey(test, user)).key);
  });
  afterAll(() => test.close());

  it('creates a store, uploads and attaches files (createAndPoll), searches with filters, in OpenAI shapes', async () => {
    const store = await openai.vectorStores.create({ name: 'Handbook', metadata: { team: 'ops' } });
    expect(store).toMatchObject({
      object: 'vector_store',
      name: 'Handbook',
      metadata: { team: 'ops' },
      status: 'completed',
    });
    const collection = await test.http().get(`/v1/collections/${store.id}/`).set(user.auth).expect(200);
    expect(collection.body.name).toBe('Handbook');

    const leave = await openai.files.create({
      file: await toFile(Buffer.from('# Leave\nBook holidays four weeks early in the leave calendar.'), 'leave.md'),
      purpose: 'assistants',
    });
    expect(leave).toMatchObject({ object: 'file', filename: 'leave.md', purpose: 'assistants', status: 'processed' });
    const expenses = await openai.files.create({
      file: await toFile(Buffer.from('Expenses are filed monthly; holidays abroad need a receipt.'), 'expenses.txt'),
      purpose: 'assistants',
    });
    const attached = await openai.vectorStores.files.createAndPoll(store.id, {
      file_id: leave.id,
      attributes: { kind: 'policy', year: 2026 },
    });
    expect(attached).toMatchObject({
      id: leave.id,
      object: 'vector_store.file',
      status: 'completed',
      last_error: null,
    });
    await openai.vectorStores.files.createAndPoll(store.id, {
      file_id: expenses.id,
      attributes: { kind: 'finance', year: 2025 },
    });

    const retrieved = await openai.vectorStores.retrieve(store.id);
    expect(retrieved.file_counts).toMatchObject({ completed: 2, failed: 0, total: 2 });

    const results = await openai.vectorStores.search(store.id, { query: 'holidays' });
    const names = [];
    for await (const result of results) names.push(result.filename);
    expect(names.sort()).toEqual(['expenses.txt', 'leave.md']);
    const first = results.data[0];
    expect(first.content[0]).toMatchObject({ type: 'text' });
    expect(first.attributes).toHaveProperty('kind');

    const filtered = await openai.vectorStores.search(store.id, {
      query: 'holidays',
      filters: {
        type: 'and',
        filters: [
          { type: 'eq', key: 'kind', value: 'policy' },
          { type: 'gte', key: 'year', value: 2026 },
        ],
      },
    });
    expect(filtered.data.map((r) => [r.file_id, r.filename])).toEqual([[leave.id, 'leave.md']]);
    const either = async (filters: object) =>
      (await openai.vectorStores.search(store.id, { query: 'holidays', filters: filters as never })).data
        .map((r) => r.filename)
        .sort();
    expect(
      await either({
        type: 'or',
        filters: [
          { type: 'eq', key: 'kind', value: 'policy' },
          { type: 'lt', key: 'year', value: 2026 },
        ],
      }),
    ).toEqual(['expenses.txt', 'leave.md']);
    expect(
      await either({
        type: 'or',
        filters: [
          { type: 'eq', key: 'kind', value: 'nothing' },
          {
            type: 'and',
            filters: [
              { type: 'eq', key: 'kind', value: 'finance' },
              { type: 'in', key: 'year', value: [2024, 2025] },
            ],
          },
        ],
      }),
    ).toEqual(['expenses.txt']);
    // A missing attribute matches neither side of an `or` of equalities (nor an `and`).
    expect(
      await either({
        type: 'or',
        filters: [
          { type: 'eq', key: 'missing', value: 'x' },
          { type: 'gt', key: 'missing', value: 'a' },
        ],
      }),
    ).toEqual([]);
    expect(await either({ type: 'or', filters: [{ type: 'ne', key: 'missing', value: 'x' }] })).toEqual([
      'expenses.txt',
      'leave.md',
    ]);

    const listed = [];
    for await (const file of openai.vectorStores.files.list(store.id)) listed.push(file.id);
    expect(listed.sort()).toEqual([leave.id, expenses.id].sort());

    await openai.vectorStores.files.delete(expenses.id, { vector_store_id: store.id });
    const after = await openai.vectorStores.search(store.id, { query: 'holidays' });
    expect(after.data.map((r) => r.filename)).toEqual(['leave.md']);

    const stores = [];
    for await (const s of openai.vectorStores.list()) stores.push(s.id);
    expect(stores).toContain(store.id);
    expect((await openai.vectorStores.update(store.id, { name: 'Staff handbook' })).name).toBe('Staff handbook');
    await openai.files.delete(leave.id);
    expect((await openai.vectorStores.search(store.id, { query: 'holidays' })).data).toEqual([]);
    expect(await openai.vectorStores.delete(store.id)).toMatchObject({ id: store.id, deleted: true });
    await test.http().get(`/v1/collections/${store.id}/`).set(user.auth).expect(404);
  });

  it('a file of an unsupported type is attached as failed, with a reason', async () => {
    const store = await openai.vectorStores.create({ name: 'Binary' });
    const file = await openai.files.create({
      file: await toFile(Buffer.from('PK\u0003\u0004'), 'archive.zip'),
      purpose: 'assistants',
    });
    const attached = await openai.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
    expect(attached.status).toBe('failed');
    expect(attached.last_error).toEqual({
      code: 'unsupported_file',
      message:
        'Unsupported file type "archive.zip". Attach plain text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).',
    });
    expect((await openai.vectorStores.retrieve(store.id)).file_counts).toMatchObject({ failed: 1, completed: 0 });
  });

  it("a malformed filter is a 400 in OpenAI's error shape; unknown stores and files are 404", async () => {
    const store = await openai.vectorStores.create({ name: 'Filters' });
    for (const [filters, message] of [
      [
        { type: 'or', filters: [{ type: 'eq', key: 'archived', value: true }] },
        'filters: "archived": "eq" needs a string or a number (attributes are strings and numbers here).',
      ],
      [
        { type: 'like', key: 'a', value: 1 },
        'filters: Unknown filter type "like"; use eq, ne, gt, gte, lt, lte, in, nin, and or or.',
      ],
      [{ type: 'in', key: 'a', value: 1 }, 'filters: "a": "in" needs a list of strings or numbers.'],
      [{ type: 'or', filters: [] }, 'filters: A compound filter needs a non-empty list "filters".'],
      [
        [0, 1, 2, 3, 4, 5].reduce<object>((inner) => ({ type: 'or', filters: [inner] }), {
          type: 'eq',
          key: 'a',
          value: 1,
        }),
        'filters: Compound filters may nest at most 5 deep.',
      ],
      [
        { type: 'or', filters: Array.from({ length: 21 }, (_, i) => ({ type: 'eq', key: `k${i}`, value: i })) },
        'filters: Ensure the filters hold no more than 20 comparisons.',
      ],
      [
        {
          type: 'or',
          filters: [
            { type: 'eq', key: 'year', value: 2024 },
            { type: 'eq', key: 'year', value: '2024' },
          ],
        },
        'filters: "year": Numbers cannot be compared with strings: use one type per field.',
      ],
    ] as const) {
      const error = await failureOf(openai.vectorStores.search(store.id, { query: 'x', filters: filters as never }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.message).toContain(message);
      expect((error.error as { code: string; param: string }).param).toBe('filters');
    }
    const missing = await failureOf(openai.vectorStores.retrieve('00000000-0000-4000-8000-000000000000'));
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.message).toContain('Vector store "00000000-0000-4000-8000-000000000000" not found.');
    const noFile = await failureOf(
      openai.vectorStores.files.create(store.id, { file_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(noFile).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("attributes and a store's metadata keep OpenAI's bounds (16 keys, 64, 512) and DOCUMENT_METADATA_MAX_BYTES: a 400 naming the field", async () => {
    const store = await openai.vectorStores.create({ name: 'Bounded attributes' });
    const file = await openai.files.create({
      file: await toFile(Buffer.from('Starfruit notes.'), 'bounded.txt'),
      purpose: 'assistants',
    });
    const keys = (n: number, value: string) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`key-${String(i).padStart(2, '0')}`, value]));
    const tooMany = 'Ensure this object has no more than 16 keys.';
    const keyTooLong = 'Keys must be 1 to 64 characters long.';
    const valueTooLong = 'Ensure each value has no more than 512 characters.';
    const tooBig = 'Ensure this object takes no more than 8192 bytes as JSON.';
    for (const [attributes, message] of [
      [keys(17, 'v'), tooMany],
      [{ ['k'.repeat(65)]: 'v' }, keyTooLong],
      [{ kind: 'v'.repeat(513) }, valueTooLong],
      // 16 values of 512 characters, 3 bytes each in UTF-8: within the counts, past the bytes.
      [keys(16, '€'.repeat(512)), tooBig],
    ] as const) {
      const error = await failureOf(openai.vectorStores.files.create(store.id, { file_id: file.id, attributes }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.message).toContain(`attributes: ${message}`);
      expect((error.error as { param: string }).param).toBe('attributes');
    }
    for (const [metadata, message] of [
      [keys(17, 'v'), tooMany],
      [{ ['k'.repeat(65)]: 'v' }, keyTooLong],
      [{ team: 'v'.repeat(513) }, valueTooLong],
      [keys(16, '€'.repeat(512)), tooBig],
    ] as const) {
      for (const call of [
        () => openai.vectorStores.create({ name: 'Refused', metadata }),
        () => openai.vectorStores.update(store.id, { metadata }),
      ]) {
        const error = await failureOf(call());
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error.message).toContain(`metadata: ${message}`);
        expect((error.error as { param: string }).param).toBe('metadata');
      }
    }
    expect((await openai.vectorStores.list()).data.map((one) => one.name)).not.toContain('Refused');
    expect(await openai.vectorStores.files.list(store.id)).toMatchObject({ data: [] });
    // At the bounds: accepted, and the document's metadata is the attributes.
    const attributes = { ...keys(15, 'v'.repeat(400)), ['k'.repeat(64)]: 'v'.repeat(512) };
    const attached = await openai.vectorStores.files.createAndPoll(store.id, { file_id: file.id, attributes });
    expect(attached).toMatchObject({ status: 'completed', attributes });
  });

  it("OpenAI's shapes: score_threshold applied, query as a list, files?filter= checked, chunking_strategy with its figures", async () => {
    const store = await openai.vectorStores.create({ name: 'Shapes' });
    for (const [name, text] of [
      ['kelp.txt', 'Kelp forests grow fast in cold water. Kelp kelp kelp forests.'],
      ['reef.txt', 'Coral reefs and a few kelp strands live in warm water.'],
    ]) {
      const file = await openai.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });
      const attached = await openai.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
      expect(attached.chunking_strategy).toEqual({
        type: 'static',
        static: { max_chunk_size_tokens: 534, chunk_overlap_tokens: 67 },
      });
    }
    const all = (await openai.vectorStores.search(store.id, { query: 'kelp' })).data;
    expect(all.map((hit) => hit.filename)).toEqual(['kelp.txt', 'reef.txt']);
    const between = (all[0].score + all[1].score) / 2;
    const above = await openai.vectorStores.search(store.id, {
      query: 'kelp',
      ranking_options: { ranker: 'auto', score_threshold: between },
    });
    expect(above.data.map((hit) => hit.filename)).toEqual(['kelp.txt']);
    const negative = await failureOf(
      openai.vectorStores.search(store.id, { query: 'kelp', ranking_options: { score_threshold: -1 } }),
    );
    expect(negative).toBeInstanceOf(OpenAI.BadRequestError);
    expect(negative.message).toContain('ranking_options: score_threshold must be a number of 0 or more.');

    // A list of queries is asked as one question, its strings joined by a space.
    const listed = await openai.vectorStores.search(store.id, { query: ['coral', 'reefs'] });
    expect(listed.data[0].filename).toBe('reef.txt');
    const page = await test
      .http()
      .post(`/v1/vector_stores/${store.id}/search`)
      .set(user.auth)
      .send({ query: [' coral ', 'reefs'] })
      .expect(200);
    expect(page.body.search_query).toBe('coral reefs');
    for (const [query, message] of [
      [[], 'query: This list may not be empty.'],
      [['  '], 'query: This field is required.'],
      [[1], 'query: Expected a string or a list of strings.'],
    ] as const) {
      const error = await failureOf(openai.vectorStores.search(store.id, { query: query as never }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.message).toContain(message);
    }

    const bogus = await failureOf(openai.vectorStores.files.list(store.id, { filter: 'bogus' as never }));
    expect(bogus).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bogus.message).toContain('filter: Must be one of in_progress, completed, failed, cancelled.');
    expect((bogus.error as { param: string }).param).toBe('filter');
    expect((await openai.vectorStores.files.list(store.id, { filter: 'cancelled' })).data).toEqual([]);
    expect((await openai.vectorStores.files.list(store.id, { filter: 'completed' })).data).toHaveLength(2);
  });

  it('a filter key "__proto__" or "constructor" is an ordinary attribute name (no prototype pollution, no crash)', async () => {
    const store = await openai.vectorStores.create({ name: 'Proto' });
    const file = await openai.files.create({
      file: await toFile(Buffer.from('Printers jam when the tray is empty.'), 'printers.txt'),
      purpose: 'assistants',
    });
    await openai.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
    for (const key of ['__proto__', 'constructor', 'toString'])
      for (let i = 0; i < 2; i++) {
        const page = await openai.vectorStores.search(store.id, {
          query: 'printers',
          filters: { type: 'eq', key, value: 1 },
        });
        expect(page.data).toEqual([]);
      }
    expect(({} as Record<string, unknown>).$eq).toBeUndefined();
    await test.http().get('/health/').expect(200);
    expect((await openai.vectorStores.search(store.id, { query: 'printers' })).data).toHaveLength(1);
  });

  it('a filename with NUL characters or a path is stored without them (no 500); a huge one is cut', async () => {
    const key = (await createKey(test, user)).key;
    const upload = (filename: string) =>
      test
        .http()
        .post('/v1/files')
        .set('Authorization', `Bearer ${key}`)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('Hello.'), { filename, contentType: 'text/plain' });
    expect((await upload('a\u0000b.txt').expect(201)).body.filename).toBe('ab.txt');
    expect((await upload('../../etc/passwd.txt').expect(201)).body.filename).toBe('passwd.txt');
    expect((await upload(`${'x'.repeat(5000)}.txt`).expect(201)).body.filename).toHaveLength(300);
  });

  it("another organization's file or store as `after`/`before` is an unknown cursor (no oracle of its existence)", async () => {
    const stranger = await signUp(test);
    const theirs = clientFor(test, (await createKey(test, stranger)).key);
    const file = await theirs.files.create({
      file: await toFile(Buffer.from('Theirs.'), 'theirs.txt'),
      purpose: 'assistants',
    });
    const store = await theirs.vectorStores.create({ name: 'Theirs' });
    await openai.files.create({ file: await toFile(Buffer.from('Mine.'), 'mine.txt'), purpose: 'assistants' });
    const key = (await createKey(test, user)).key;
    for (const [path, id] of [
      ['/v1/files', file.id],
      ['/v1/vector_stores', store.id],
    ])
      for (const cursor of ['after', 'before']) {
        const page = await test.http().get(`${path}?${cursor}=${id}`).set('Authorization', `Bearer ${key}`).expect(200);
        expect(page.body.data).toEqual([]);
      }
  });

  it('a file id that is not one (attach, retrieve, detach, file_ids on create) is a 404 naming it, not a 500', async () => {
    const store = await openai.vectorStores.create({ name: 'Ids' });
    const key = (await createKey(test, user)).key;
    const auth = { Authorization: `Bearer ${key}` };
    for (const id of ['not-a-uuid', '%00']) {
      const shown = decodeURIComponent(id);
      const expected = { detail: `File ${JSON.stringify(shown)} not found.` };
      const retrieved = await test.http().get(`/v1/vector_stores/${store.id}/files/${id}`).set(auth).expect(404);
      expect(retrieved.body).toMatchObject(expected);
      await test.http().delete(`/v1/vector_stores/${store.id}/files/${id}`).set(auth).expect(404);
      if (id === '%00') continue; // in a JSON body, a NUL character is a 400 naming the field
      const attached = await test
        .http()
        .post(`/v1/vector_stores/${store.id}/files`)
        .set(auth)
        .send({ file_id: shown })
        .expect(404);
      expect(attached.body).toMatchObject(expected);
    }
    const created = await test
      .http()
      .post('/v1/vector_stores')
      .set(auth)
      .send({ name: 'With files', file_ids: ['nope'] })
      .expect(404);
    expect(created.body).toMatchObject({ detail: 'File "nope" not found.' });
    // Refused before anything is made: the name is still free.
    await test.http().post('/v1/vector_stores').set(auth).send({ name: 'With files' }).expect(201);
  });

  it("files.content() gives the file's bytes as uploaded, to its organization only (another's: 404)", async () => {
    const bytes = Buffer.concat([Buffer.from('Résumé ✓\n'), Buffer.from([0, 255, 254, 10])]);
    const file = await openai.files.create({
      file: await toFile(bytes, "résumé (John's) v2.txt"),
      purpose: 'assistants',
    });
    const response = await openai.files.content(file.id);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    const raw = await test.http().get(`/v1/files/${file.id}/content`).set(user.auth).buffer(true).expect(200);
    expect(raw.headers['content-type']).toBe('application/octet-stream');
    expect(raw.headers['content-disposition']).toBe(
      "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28John%27s%29%20v2.txt",
    );
    expect(raw.headers['x-content-type-options']).toBe('nosniff');

    const stranger = clientFor(test, (await createKey(test, await signUp(test))).key);
    const foreign = await failureOf(stranger.files.content(file.id));
    expect(foreign).toBeInstanceOf(OpenAI.NotFoundError);
    expect(foreign.message).toContain(`File "${file.id}" not found.`);
    const unknown = await test.http().get('/v1/files/not-a-file/content').set(user.auth).expect(404);
    expect(unknown.body).toMatchObject({
      detail: 'File "not-a-file" not found.',
      error: { type: 'not_found_error', code: 'not_found' },
    });
    // A key limited to a collection the file is not within does not reach it either.
    const elsewhere = await openai.vectorStores.create({ name: 'Elsewhere' });
    const limited = clientFor(test, (await partnerKey(test, user, { collection_ids: [elsewhere.id] })).key);
    expect(await failureOf(limited.files.content(file.id))).toBeInstanceOf(OpenAI.NotFoundError);
    await openai.files.delete(file.id);
    expect(await failureOf(openai.files.content(file.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("a key limited to collections reaches only its own stores, and never another's passage", async () => {
    const mine = await openai.vectorStores.create({ name: 'Mine' });
    const theirs = await openai.vectorStores.create({ name: 'Theirs' });
    const secret = await openai.files.create({
      file: await toFile(Buffer.from('The vault code is secret.'), 'vault.txt'),
      purpose: 'assistants',
    });
    await openai.vectorStores.files.createAndPoll(theirs.id, { file_id: secret.id });
    const key = await partnerKey(test, user, { collection_ids: [mine.id] });
    const limited = clientFor(test, key.key);
    const listed = [];
    for await (const s of limited.vectorStores.list()) listed.push(s.id);
    expect(listed).toEqual([mine.id]);
    expect(await failureOf(limited.vectorStores.search(theirs.id, { query: 'vault' }))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect(await failureOf(limited.vectorStores.retrieve(theirs.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await failureOf(limited.files.retrieve(secret.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const files = await test.http().get('/v1/files').set(bearer(key.key)).expect(200);
    expect(files.body.data.map((f: { id: string }) => f.id)).not.toContain(secret.id);
    expect((await limited.vectorStores.search(mine.id, { query: 'vault' })).data).toEqual([]);
  });
});
