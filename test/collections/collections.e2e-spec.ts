import { CollectionPurger } from '../../src/collections/collection-purger.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';

interface Source {
  document_id: string;
  title: string;
  score: number;
}

/** Twelve documents about birds, with words shared unevenly so that the statistics matter. */
const CORPUS = Array.from({ length: 12 }, (_, i) => ({
  title: `Bird note ${i}`,
  content:
    `The ${i % 3 === 0 ? 'falcon' : 'sparrow'} hunts ${'at dawn '.repeat(1 + (i % 4))}near the river. ` +
    `${i % 2 === 0 ? 'Falcons dive fast.' : 'Sparrows nest in hedges.'} Observation ${i} by the ${i % 5 === 0 ? 'ornithologist' : 'warden'}.`,
}));

describe('collections', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let aliceOrg: string;

  const http = () => test.http();
  const create = (user: SignedInUser, body: Record<string, unknown>) =>
    http().post('/v1/collections/').set(user.auth).send(body);

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    bob = await signUp(test);
    aliceOrg = (await http().get('/auth/users/me/').set(alice.auth).expect(200)).body.organization_id;
  });
  afterAll(() => test.close());

  describe('CRUD', () => {
    it('every organization has `default`, whose id is the organization id, listed first', async () => {
      const list = await http().get('/v1/collections/').set(alice.auth).expect(200);
      expect(list.body).toMatchObject({ count: 1, next: null, previous: null });
      expect(list.body.results[0]).toEqual({
        id: aliceOrg,
        name: 'default',
        description: null,
        metadata: {},
        document_count: 0,
        chunk_count: 0,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      });
      const stored = await test.db.query('SELECT organization_id, name FROM collections WHERE id = $1', [aliceOrg]);
      expect(stored.rows).toEqual([{ organization_id: aliceOrg, name: 'default' }]);
    });

    it('creates, reads, renames and deletes a collection with its documents', async () => {
      const created = await create(alice, {
        name: 'Handbook',
        description: 'How we work',
        metadata: { team: 'ops', year: 2026 },
      }).expect(201);
      expect(created.body).toMatchObject({
        name: 'Handbook',
        description: 'How we work',
        metadata: { team: 'ops', year: 2026 },
        document_count: 0,
        chunk_count: 0,
      });
      const id = created.body.id as string;
      const doc = await http()
        .post('/v1/documents/')
        .set(alice.auth)
        .send({ title: 'Leave', content: 'Holidays are booked in the calendar. '.repeat(3), collection_id: id })
        .expect(201);
      expect(doc.body.collection_id).toBe(id);
      const read = await http().get(`/v1/collections/${id}/`).set(alice.auth).expect(200);
      expect(read.body).toMatchObject({ document_count: 1, chunk_count: doc.body.chunk_count });

      const renamed = await http()
        .patch(`/v1/collections/${id}/`)
        .set(alice.auth)
        .send({ name: 'Staff handbook', metadata: { team: 'people' } })
        .expect(200);
      expect(renamed.body).toMatchObject({
        id,
        name: 'Staff handbook',
        description: 'How we work',
        metadata: { team: 'people' },
      });

      await http().delete(`/v1/collections/${id}/`).set(alice.auth).expect(204);
      await http().get(`/v1/collections/${id}/`).set(alice.auth).expect(404);
      await http().get(`/v1/documents/${doc.body.id}/`).set(alice.auth).expect(404);
      // Its documents and statistics go right after, a batch at a time (see collections-deletion).
      await test.app.get(CollectionPurger).idle();
      const left = await test.db.query(
        `SELECT (SELECT count(*)::int FROM documents WHERE collection_id = $1) AS documents,
                (SELECT count(*)::int FROM document_chunks WHERE scope_id = $1) AS chunks,
                (SELECT count(*)::int FROM term_stats WHERE scope_id = $1) AS terms,
                (SELECT count(*)::int FROM corpus_stats WHERE scope_id = $1) AS corpora`,
        [id],
      );
      expect(left.rows[0]).toEqual({ documents: 0, chunks: 0, terms: 0, corpora: 0 });
    });

    it('refuses a duplicate name (any case) with 409', async () => {
      await create(alice, { name: 'Tickets' }).expect(201);
      const duplicate = await create(alice, { name: 'tickets' }).expect(409);
      expect(duplicate.body).toEqual({ detail: 'A collection named "tickets" already exists.' });
      const other = await create(alice, { name: 'Other' }).expect(201);
      const renamed = await http()
        .patch(`/v1/collections/${other.body.id}/`)
        .set(alice.auth)
        .send({ name: 'TICKETS' })
        .expect(409);
      expect(renamed.body.detail).toBe('A collection named "TICKETS" already exists.');
      // Another organization may use the name.
      await create(bob, { name: 'Tickets' }).expect(201);
    });

    it('a name that differs only by its Unicode normalisation is a duplicate (409); names are stored composed (NFC)', async () => {
      const composed = await create(alice, { name: 'Caf\u00e9' }).expect(201);
      expect(composed.body.name).toBe('Caf\u00e9');
      const decomposed = await create(alice, { name: 'Cafe\u0301' }).expect(409);
      expect(decomposed.body).toEqual({ detail: 'A collection named "Caf\u00e9" already exists.' });
      const stored = await create(alice, { name: 'Re\u0301sume\u0301' }).expect(201);
      expect(stored.body.name).toBe('R\u00e9sum\u00e9');
      await http().patch(`/v1/collections/${stored.body.id}/`).set(alice.auth).send({ name: 'CAFE\u0301' }).expect(409);
    });

    it('refuses to delete or rename `default` (409), by id or by its alias', async () => {
      expect((await http().delete(`/v1/collections/${aliceOrg}/`).set(alice.auth).expect(409)).body).toEqual({
        detail: 'The default collection cannot be deleted.',
      });
      await http().delete('/v1/collections/default/').set(alice.auth).expect(409);
      expect(
        (await http().patch('/v1/collections/default/').set(alice.auth).send({ name: 'main' }).expect(409)).body,
      ).toEqual({ detail: 'The default collection cannot be renamed.' });
      const described = await http()
        .patch('/v1/collections/default/')
        .set(alice.auth)
        .send({ description: 'Everything else' })
        .expect(200);
      expect(described.body).toMatchObject({ id: aliceOrg, name: 'default', description: 'Everything else' });
    });

    it("another organization's collection, or no collection at all, is a 404 naming it", async () => {
      const bobs = await create(bob, { name: 'Private' }).expect(201);
      for (const request of [
        http().get(`/v1/collections/${bobs.body.id}/`),
        http().patch(`/v1/collections/${bobs.body.id}/`).send({ name: 'Mine' }),
        http().delete(`/v1/collections/${bobs.body.id}/`),
      ])
        expect((await request.set(alice.auth).expect(404)).body).toEqual({
          detail: `Collection "${bobs.body.id}" not found.`,
        });
      expect((await http().get('/v1/collections/not-a-uuid/').set(alice.auth).expect(404)).body).toEqual({
        detail: 'Collection "not-a-uuid" not found.',
      });
    });

    it('validates fields (400 naming them)', async () => {
      expect((await create(alice, {}).expect(400)).body.detail).toBe('name: This field is required.');
      expect((await create(alice, { name: 'x'.repeat(101) }).expect(400)).body.detail).toBe(
        'name: Ensure this field has no more than 100 characters.',
      );
      expect((await create(alice, { name: 'Nested', metadata: { a: { b: 1 } } }).expect(400)).body.detail).toBe(
        'metadata: "a" must be a string or a number (metadata is flat).',
      );
    });

    it('paginates like other lists', async () => {
      const user = await signUp(test);
      for (let i = 0; i < 4; i++) await create(user, { name: `C${i}` }).expect(201);
      const first = await http().get('/v1/collections/?limit=2').set(user.auth).expect(200);
      expect(first.body).toMatchObject({ count: 5, next: '/v1/collections/?limit=2&offset=2', previous: null });
      expect(first.body.results.map((c: { name: string }) => c.name)).toEqual(['default', 'C0']);
      const last = await http().get('/v1/collections/?limit=2&offset=4').set(user.auth).expect(200);
      expect(last.body.results.map((c: { name: string }) => c.name)).toEqual(['C3']);
    });

    it('holds at most 1,000 collections per organization (the 1,001st: 400)', async () => {
      const user = await signUp(test);
      const org = (await http().get('/auth/users/me/').set(user.auth).expect(200)).body.organization_id;
      // 998 more straight into the table, then the API makes the 1,000th and refuses the next.
      await test.db.query(
        `INSERT INTO collections (organization_id, name) SELECT $1, 'bulk ' || g FROM generate_series(1, 998) g`,
        [org],
      );
      await create(user, { name: 'The thousandth' }).expect(201);
      expect((await create(user, { name: 'One too many' }).expect(400)).body).toEqual({
        detail:
          'This organization already has 1000 collections, the most it may have; delete one before creating another.',
      });
    });
  });

  describe('documents in collections', () => {
    let support: string;
    let handbook: string;

    beforeAll(async () => {
      support = (await create(alice, { name: 'Support' }).expect(201)).body.id;
      handbook = (await create(alice, { name: 'Handbook 2' }).expect(201)).body.id;
      await http()
        .post('/v1/documents/')
        .set(alice.auth)
        .send({ title: 'In default', content: 'Default text.' })
        .expect(201);
      await http()
        .post('/v1/documents/batch/')
        .set(alice.auth)
        .send({
          collection_id: support,
          documents: [
            { title: 'Ticket 1', content: 'The printer jams.' },
            { title: 'Ticket 2', content: 'The screen flickers.' },
          ],
        })
        .expect(201)
        .expect(({ body }) =>
          expect(body.results.map((d: { collection_id: string }) => d.collection_id)).toEqual([support, support]),
        );
      await http()
        .post('/v1/documents/')
        .set(alice.auth)
        .field('collection_id', handbook)
        .attach('file', Buffer.from('# Leave\nBook holidays early.'), 'leave.md')
        .expect(201)
        .expect(({ body }) => expect(body.collection_id).toBe(handbook));
    });

    it('lists one collection with ?collection_id=, `default` without it', async () => {
      const titles = async (query: string) =>
        (await http().get(`/v1/documents/${query}`).set(alice.auth).expect(200)).body.results
          .map((d: { title: string }) => d.title)
          .sort();
      expect(await titles('')).toEqual(['In default']);
      expect(await titles('?collection_id=default')).toEqual(['In default']);
      expect(await titles(`?collection_id=${support}`)).toEqual(['Ticket 1', 'Ticket 2']);
      expect(await titles(`?collection_id=${handbook}&limit=5`)).toEqual(['leave.md']);
    });

    it('a document record carries its collection_id; one by id is found in any collection', async () => {
      const list = await http().get(`/v1/documents/?collection_id=${support}`).set(alice.auth).expect(200);
      const one = await http().get(`/v1/documents/${list.body.results[0].id}/`).set(alice.auth).expect(200);
      expect(one.body.collection_id).toBe(support);
    });

    it("an unknown or another organization's collection is a 404 on upload, batch and list", async () => {
      const bobs = (await create(bob, { name: 'Bob only' }).expect(201)).body.id as string;
      for (const id of [bobs, '00000000-0000-4000-8000-000000000000', 'nope']) {
        const detail = `Collection "${id}" not found.`;
        expect(
          (
            await http()
              .post('/v1/documents/')
              .set(alice.auth)
              .send({ title: 't', content: 'c', collection_id: id })
              .expect(404)
          ).body,
        ).toEqual({ detail });
        await http()
          .post('/v1/documents/batch/')
          .set(alice.auth)
          .send({ collection_id: id, documents: [{ title: 't', content: 'c' }] })
          .expect(404);
        await http()
          .post('/v1/documents/')
          .set(alice.auth)
          .field('collection_id', id)
          .attach('file', Buffer.from('x'), 'x.txt')
          .expect(404);
        expect((await http().get(`/v1/documents/?collection_id=${id}`).set(alice.auth).expect(404)).body).toEqual({
          detail,
        });
      }
      const stored = await test.db.query(
        `SELECT count(*)::int AS n FROM documents WHERE title = 't' OR title = 'x.txt'`,
      );
      expect(stored.rows[0].n).toBe(0);
    });

    it('collection_id inside a batch document is refused (it is given once, at the top level)', async () => {
      const response = await http()
        .post('/v1/documents/batch/')
        .set(alice.auth)
        .send({ documents: [{ title: 't', content: 'c', collection_id: support }] })
        .expect(400);
      expect(response.body.detail).toBe('documents[0].collection_id: This field is not allowed.');
    });

    it('queries the collections asked, `default` when none', async () => {
      const titles = async (body: Record<string, unknown>) =>
        (
          (
            await http()
              .post('/v1/search/')
              .set(alice.auth)
              .send({ top_k: 10, ...body })
              .expect(200)
          ).body.results as Source[]
        )
          .map((s) => s.title)
          .sort();
      expect(await titles({ query: 'printer default screen holidays' })).toEqual(['In default']);
      expect(await titles({ query: 'printer default screen holidays', collection_ids: [support] })).toEqual([
        'Ticket 1',
        'Ticket 2',
      ]);
      expect(
        await titles({ query: 'printer default screen holidays', collection_ids: [support, handbook, 'default'] }),
      ).toEqual(['In default', 'Ticket 1', 'Ticket 2', 'leave.md']);
    });
  });

  describe('several collections rank as one corpus', () => {
    it('the same documents in one collection and split across three give the same ids, titles and scores', async () => {
      const user = await signUp(test);
      const one = (await create(user, { name: 'All' }).expect(201)).body.id as string;
      const parts = [];
      for (const name of ['Part A', 'Part B', 'Part C'])
        parts.push((await create(user, { name }).expect(201)).body.id as string);
      await http()
        .post('/v1/documents/batch/')
        .set(user.auth)
        .send({ collection_id: one, documents: CORPUS })
        .expect(201);
      for (let p = 0; p < 3; p++)
        await http()
          .post('/v1/documents/batch/')
          .set(user.auth)
          .send({ collection_id: parts[p], documents: CORPUS.filter((_, i) => i % 3 === p) })
          .expect(201);
      const ranked = async (collection_ids: string[], query: string) => {
        const response = await http()
          .post('/v1/search/')
          .set(user.auth)
          .send({ query, top_k: 12, collection_ids })
          .expect(200);
        return (response.body.results as Source[]).map((s) => [s.title, s.score]).sort();
      };
      for (const query of ['falcon dawn river', 'sparrows nest in hedges', 'ornithologist observation 5']) {
        const whole = await ranked([one], query);
        expect(whole.length).toBeGreaterThan(2);
        expect(await ranked(parts, query)).toEqual(whole);
      }
      // A query over one part alone ranks with that part's statistics only: other scores.
      const alone = await ranked([parts[0]], 'falcon dawn river');
      const together = Object.fromEntries(await ranked(parts, 'falcon dawn river'));
      expect(alone.some(([title, score]) => together[title as string] !== score)).toBe(true);
    });
  });

  describe('bad collection_ids', () => {
    it('`domain` with `collection_ids` is a 400 (query, search)', async () => {
      for (const path of ['/v1/query/', '/v1/search/']) {
        const response = await http()
          .post(path)
          .set(alice.auth)
          .send({ query: 'falcon', domain: 'medicine', collection_ids: ['default'] })
          .expect(400);
        expect(response.body.detail).toBe(
          'collection_ids: Give either domain or collection_ids, not both: a question asks a public domain or your collections.',
        );
      }
    });

    it('more than 20, none, or not a list: 400', async () => {
      const ids = Array.from({ length: 21 }, () => 'default');
      for (const [value, message] of [
        [ids, 'collection_ids: Ensure this field has no more than 20 elements.'],
        [[], 'collection_ids: This list may not be empty.'],
        ['default', 'collection_ids: Expected a list of collection ids.'],
        [[7], 'collection_ids: Expected a list of collection ids.'],
      ] as const) {
        for (const path of ['/v1/query/', '/v1/search/']) {
          const response = await http()
            .post(path)
            .set(alice.auth)
            .send({ query: 'falcon', collection_ids: value })
            .expect(400);
          expect(response.body.detail).toBe(message);
        }
      }
    });

    it("an unknown or another organization's collection: 404 on query, search, chat and completions", async () => {
      const bobs = (await create(bob, { name: 'Secret' }).expect(201)).body.id as string;
      const session = (await http().post('/v1/chat/sessions/').set(alice.auth).send({}).expect(201)).body.id;
      for (const id of [bobs, '00000000-0000-4000-8000-000000000000', 'nope']) {
        const detail = `Collection "${id}" not found.`;
        for (const path of ['/v1/query/', '/v1/search/'])
          expect(
            (
              await http()
                .post(path)
                .set(alice.auth)
                .send({ query: 'falcon', collection_ids: [id] })
                .expect(404)
            ).body,
          ).toEqual({
            detail,
          });
        expect(
          (
            await http()
              .post(`/v1/chat/sessions/${session}/messages/`)
              .set(alice.auth)
              .send({ content: 'falcon', collection_ids: [id] })
              .expect(404)
          ).body,
        ).toEqual({ detail });
      }
      const completion = await http()
        .post('/v1/chat/completions')
        .set(alice.auth)
        .send({ model: bobs, messages: [{ role: 'user', content: 'falcon' }] })
        .expect(404);
      expect(completion.body).toMatchObject({ detail: `Model "${bobs}" not found.` });
      // Nothing was charged for any of them.
      const usage = await http().get('/v1/billings/subscription/').set(alice.auth).expect(200);
      expect(usage.body.current_quota.credits_used).toBe(0);
    });
  });

  describe('chat and completions', () => {
    it('chat messages and completions ask the collections given; GET /v1/models lists them', async () => {
      const user = await signUp(test);
      const kb = (await create(user, { name: 'KB' }).expect(201)).body.id as string;
      await http()
        .post('/v1/documents/')
        .set(user.auth)
        .send({ title: 'Kelp', content: 'Kelp forests grow fast in cold water.', collection_id: kb })
        .expect(201);
      const session = (await http().post('/v1/chat/sessions/').set(user.auth).send({}).expect(201)).body.id;
      const without = await http()
        .post(`/v1/chat/sessions/${session}/messages/`)
        .set(user.auth)
        .send({ content: 'kelp forests' })
        .expect(201);
      expect(without.body.assistant_message.sources).toEqual([]);
      const asked = await http()
        .post(`/v1/chat/sessions/${session}/messages/`)
        .set(user.auth)
        .send({ content: 'kelp forests', collection_ids: [kb] })
        .expect(201);
      expect(asked.body.assistant_message.sources.map((s: Source) => s.title)).toEqual(['Kelp']);

      const models = await http().get('/v1/models').set(user.auth).expect(200);
      // `private` stands for `default`, which is not listed again (an organization without collections sees no change).
      expect(models.body.data.map((m: { id: string }) => m.id).slice(0, 2)).toEqual(['private', kb]);
      const completion = await http()
        .post('/v1/chat/completions')
        .set(user.auth)
        .send({ model: kb, messages: [{ role: 'user', content: 'kelp forests' }] })
        .expect(200);
      expect(completion.body.model).toBe(kb);
      expect(completion.body.sources.map((s: Source) => s.title)).toEqual(['Kelp']);
      const privately = await http()
        .post('/v1/chat/completions')
        .set(user.auth)
        .send({ model: 'private', messages: [{ role: 'user', content: 'kelp forests' }] })
        .expect(200);
      expect(privately.body.sources).toEqual([]);
    });

    it('a completion honours collection_ids with model "private" (1 to 20, unknown 404, other models 400); "default" is the default collection', async () => {
      const user = await signUp(test);
      const other = await signUp(test);
      const kb = (await create(user, { name: 'Reef' }).expect(201)).body.id as string;
      const foreign = (await create(other, { name: 'Foreign' }).expect(201)).body.id as string;
      for (const [title, content, collection] of [
        ['Coral', 'Coral reefs bleach in warm water.', kb],
        ['Lagoon', 'A coral lagoon shelters reef fish.', 'default'],
      ])
        await http()
          .post('/v1/documents/')
          .set(user.auth)
          .send({ title, content, collection_id: collection })
          .expect(201);
      const complete = (body: object) =>
        http()
          .post('/v1/chat/completions')
          .set(user.auth)
          .send({ messages: [{ role: 'user', content: 'coral reefs' }], ...body });
      const titles = (response: { body: { sources: Source[] } }) => response.body.sources.map((s) => s.title).sort();

      expect(titles(await complete({ model: 'private', collection_ids: [kb] }).expect(200))).toEqual(['Coral']);
      expect(titles(await complete({ model: 'private', collection_ids: [kb, 'default'] }).expect(200))).toEqual([
        'Coral',
        'Lagoon',
      ]);
      expect(titles(await complete({ model: 'default' }).expect(200))).toEqual(['Lagoon']);
      for (const id of ['nope', foreign])
        expect((await complete({ model: 'private', collection_ids: [id] }).expect(404)).body).toMatchObject({
          detail: `Collection "${id}" not found.`,
          error: { code: 'not_found' },
        });
      const refused = async (body: object, param: string, message: string) => {
        const response = await complete(body).expect(400);
        expect(response.body.detail).toBe(`${param}: ${message}`);
        expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
      };
      await refused({ model: 'private', collection_ids: [] }, 'collection_ids', 'This list may not be empty.');
      await refused(
        { model: 'private', collection_ids: Array.from({ length: 21 }, () => kb) },
        'collection_ids',
        'Ensure this field has no more than 20 elements.',
      );
      for (const model of [kb, 'default', 'zoo'])
        await refused(
          { model, collection_ids: [kb] },
          'collection_ids',
          'collection_ids goes with model "private": a model that names a collection or a public domain asks that one.',
        );
      // None of the refusals was charged.
      const usage = await http().get('/v1/billings/subscription/').set(user.auth).expect(200);
      expect(usage.body.current_quota.credits_used).toBe(3);
    });
  });
});
