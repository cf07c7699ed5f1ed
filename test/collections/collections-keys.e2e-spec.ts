import { bearer, KEYS, partnerKey, type PartnerKey } from '../support/api-keys.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';

interface Source {
  document_id: string;
  title: string;
}

/**
 * An API key limited to collections: it never sees, reads or writes anything of another collection
 * (404), on every route that reaches documents; without `collection_ids` it asks its own collections,
 * without `collection_id` it uploads into the first of them.
 */
describe('API keys limited to collections', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let aliceOrg: string;
  let acme: string;
  let globex: string;
  let other: string;
  let key: PartnerKey;
  let limited: { Authorization: string };
  const docs: Record<string, string> = {};

  const http = () => test.http();
  const collection = async (name: string) =>
    (await http().post('/v1/collections/').set(alice.auth).send({ name }).expect(201)).body.id as string;
  const upload = async (title: string, content: string, collection_id?: string) => {
    const response = await http().post('/v1/documents/').set(alice.auth).send({ title, content, collection_id });
    expect(response.status).toBe(201);
    docs[title] = response.body.id;
  };
  const notFound = (kind: string, name: string) => ({ detail: `${kind} ${JSON.stringify(name)} not found.` });

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    aliceOrg = (await http().get('/auth/users/me/').set(alice.auth).expect(200)).body.organization_id;
    acme = await collection('Acme');
    globex = await collection('Globex');
    other = await collection('Initech');
    await upload('Acme manual', 'The turbine manual for Acme: turbine maintenance every spring.', acme);
    await upload('Globex manual', 'The turbine manual for Globex: turbine blades are inspected monthly.', globex);
    await upload('Initech manual', 'The turbine manual for Initech: turbine secrets nobody else may read.', other);
    await upload('Default manual', 'The turbine manual of the default collection: turbine history.');
    key = await partnerKey(test, alice, { collection_ids: [acme, globex] });
    limited = bearer(key.key);
  });
  afterAll(() => test.close());

  describe('the key record', () => {
    it('carries collection_ids (null by default), settable on create and update, copied on rotation', async () => {
      expect(key.collection_ids).toEqual([acme, globex]);
      const plain = await partnerKey(test, alice, {});
      expect(plain.collection_ids).toBeNull();
      const updated = await http()
        .patch(`${KEYS}${plain.id}/update/`)
        .set(alice.auth)
        .send({ collection_ids: ['default', other] })
        .expect(200);
      expect(updated.body.collection_ids).toEqual([aliceOrg, other]);
      const rotated = await http().post(`${KEYS}${plain.id}/rotate/`).set(alice.auth).expect(201);
      expect(rotated.body.collection_ids).toEqual([aliceOrg, other]);
      const cleared = await http()
        .patch(`${KEYS}${rotated.body.id}/update/`)
        .set(alice.auth)
        .send({ collection_ids: null })
        .expect(200);
      expect(cleared.body.collection_ids).toBeNull();
      const events = await http().get(`${KEYS}events/`).set(alice.auth).expect(200);
      const change = events.body.results.find(
        (event: { action: string; key_id: string }) => event.action === 'updated' && event.key_id === plain.id,
      );
      expect(change.changes.collection_ids).toEqual([null, [aliceOrg, other]]);
    });

    it("an unknown or another organization's collection is a 404; more than 20 a 400", async () => {
      const bob = await signUp(test);
      const bobs = (await http().post('/v1/collections/').set(bob.auth).send({ name: 'B' }).expect(201)).body.id;
      for (const id of [bobs, '00000000-0000-4000-8000-000000000000', 'nope']) {
        const created = await http()
          .post(KEYS)
          .set(alice.auth)
          .send({ name: 'k', collection_ids: [acme, id] })
          .expect(404);
        expect(created.body).toEqual(notFound('Collection', id));
        await http()
          .patch(`${KEYS}${key.id}/update/`)
          .set(alice.auth)
          .send({ collection_ids: [id] })
          .expect(404);
      }
      const many = await http()
        .post(KEYS)
        .set(alice.auth)
        .send({ name: 'k', collection_ids: Array.from({ length: 21 }, () => acme) })
        .expect(400);
      expect(many.body.detail).toBe('collection_ids: Ensure this field has no more than 20 elements.');
    });

    it('a change of its collections applies at once', async () => {
      const temporary = await partnerKey(test, alice, { collection_ids: [acme] });
      const titles = async () =>
        (
          (
            await http()
              .post('/v1/search/')
              .set(bearer(temporary.key))
              .send({ query: 'turbine', top_k: 10 })
              .expect(200)
          ).body.results as Source[]
        ).map((s) => s.title);
      expect(await titles()).toEqual(['Acme manual']);
      await http()
        .patch(`${KEYS}${temporary.id}/update/`)
        .set(alice.auth)
        .send({ collection_ids: [globex] })
        .expect(200);
      expect(await titles()).toEqual(['Globex manual']);
    });
  });

  describe('asking', () => {
    const titlesOf = (sources: Source[]) => sources.map((s) => s.title).sort();

    it('search: its own collections by default; another collection is a 404', async () => {
      const own = await http()
        .post('/v1/search/')
        .set(limited)
        .send({ query: 'turbine manual', top_k: 10 })
        .expect(200);
      expect(titlesOf(own.body.results)).toEqual(['Acme manual', 'Globex manual']);
      const one = await http()
        .post('/v1/search/')
        .set(limited)
        .send({ query: 'turbine manual', collection_ids: [globex] })
        .expect(200);
      expect(titlesOf(one.body.results)).toEqual(['Globex manual']);
      for (const id of [other, 'default', aliceOrg])
        expect(
          (
            await http()
              .post('/v1/search/')
              .set(limited)
              .send({ query: 'turbine', collection_ids: [acme, id] })
              .expect(404)
          ).body,
        ).toEqual(notFound('Collection', id));
    });

    it('query: its own collections by default; another collection is a 404', async () => {
      const own = await http().post('/v1/query/').set(limited).send({ query: 'turbine manual', top_k: 10 }).expect(200);
      expect(titlesOf(own.body.sources)).toEqual(['Acme manual', 'Globex manual']);
      expect(own.body.answer).not.toMatch(/Initech|default collection/);
      await http()
        .post('/v1/query/')
        .set(limited)
        .send({ query: 'turbine', collection_ids: [other] })
        .expect(404);
    });

    it('streamed query: the same', async () => {
      const streamed = await http()
        .post('/v1/query/')
        .set(limited)
        .send({ query: 'turbine manual', top_k: 10, stream: true })
        .expect(200);
      expect(streamed.text).toContain('Acme manual');
      expect(streamed.text).not.toContain('Initech');
      await http()
        .post('/v1/query/')
        .set(limited)
        .send({ query: 'turbine', stream: true, collection_ids: [other] })
        .expect(404);
    });

    it('chat messages: its own collections by default; another collection is a 404', async () => {
      const session = (await http().post('/v1/chat/sessions/').set(limited).send({}).expect(201)).body.id;
      const own = await http()
        .post(`/v1/chat/sessions/${session}/messages/`)
        .set(limited)
        .send({ content: 'turbine manual' })
        .expect(201);
      expect(titlesOf(own.body.assistant_message.sources)).toEqual(['Acme manual', 'Globex manual']);
      const denied = await http()
        .post(`/v1/chat/sessions/${session}/messages/`)
        .set(limited)
        .send({ content: 'turbine', collection_ids: [other] })
        .expect(404);
      expect(denied.body).toEqual(notFound('Collection', other));
    });

    it("chat sessions: a session opened by a wider caller (its user's JWT) is a 404 to the key, never its answers", async () => {
      const wide = (await http().post('/v1/chat/sessions/').set(alice.auth).send({}).expect(201)).body.id;
      const asked = await http()
        .post(`/v1/chat/sessions/${wide}/messages/`)
        .set(alice.auth)
        .send({ content: 'turbine secrets', collection_ids: [other] })
        .expect(201);
      expect(titlesOf(asked.body.assistant_message.sources)).toEqual(['Initech manual']);
      for (const path of [`/v1/chat/sessions/${wide}/`, `/v1/chat/sessions/${wide}/messages/`])
        expect((await http().get(path).set(limited).expect(404)).body).toEqual(notFound('Session', wide));
      await http().post(`/v1/chat/sessions/${wide}/messages/`).set(limited).send({ content: 'again' }).expect(404);
      await http().delete(`/v1/chat/sessions/${wide}/`).set(limited).expect(404);
      const listed = await http().get('/v1/chat/sessions/').set(limited).expect(200);
      expect(listed.body.results.map((s: { id: string }) => s.id)).not.toContain(wide);
    });

    it("chat sessions: the key's own session, asked by its user's JWT, still asks only the key's collections", async () => {
      const own = (await http().post('/v1/chat/sessions/').set(limited).send({}).expect(201)).body.id;
      const denied = await http()
        .post(`/v1/chat/sessions/${own}/messages/`)
        .set(alice.auth)
        .send({ content: 'turbine secrets', collection_ids: [other] })
        .expect(404);
      expect(denied.body).toEqual(notFound('Collection', other));
      const asked = await http()
        .post(`/v1/chat/sessions/${own}/messages/`)
        .set(alice.auth)
        .send({ content: 'turbine manual' })
        .expect(201);
      expect(titlesOf(asked.body.assistant_message.sources)).toEqual(['Acme manual', 'Globex manual']);
      await http().get(`/v1/chat/sessions/${own}/messages/`).set(limited).expect(200);
    });

    it('completions: `private` asks its own collections; another collection as model is a 404', async () => {
      const ask = (model: string) =>
        http()
          .post('/v1/chat/completions')
          .set(limited)
          .send({ model, messages: [{ role: 'user', content: 'turbine manual' }] });
      const own = await ask('private').expect(200);
      expect(titlesOf(own.body.sources)).toEqual(['Acme manual', 'Globex manual']);
      expect(titlesOf((await ask(acme).expect(200)).body.sources)).toEqual(['Acme manual']);
      for (const model of [other, aliceOrg]) {
        const denied = await ask(model).expect(404);
        expect(denied.body).toMatchObject(notFound('Model', model));
        expect(denied.body.error).toMatchObject({ code: 'model_not_found' });
      }
      const streamed = await ask('private').send({ stream: true }).expect(200);
      expect(streamed.text).not.toContain('Initech');
    });

    it('models: lists only its own collections', async () => {
      const models = await http().get('/v1/models').set(limited).expect(200);
      const ids = models.body.data.map((m: { id: string }) => m.id);
      expect(ids).toEqual(expect.arrayContaining(['private', acme, globex]));
      expect(ids).not.toContain(other);
      expect(ids).not.toContain(aliceOrg);
      await http().get(`/v1/models/${other}`).set(limited).expect(404);
    });
  });

  describe('documents', () => {
    it('list: its own collections by default, one of them with ?collection_id=, another is a 404', async () => {
      const titles = async (query: string) =>
        (await http().get(`/v1/documents/${query}`).set(limited).expect(200)).body.results
          .map((d: { title: string }) => d.title)
          .sort();
      expect(await titles('')).toEqual(['Acme manual', 'Globex manual']);
      expect(await titles(`?collection_id=${globex}`)).toEqual(['Globex manual']);
      for (const id of [other, 'default'])
        expect((await http().get(`/v1/documents/?collection_id=${id}`).set(limited).expect(404)).body).toEqual(
          notFound('Collection', id),
        );
    });

    it('read: a document of another collection is a 404', async () => {
      await http().get(`/v1/documents/${docs['Acme manual']}/`).set(limited).expect(200);
      for (const title of ['Initech manual', 'Default manual'])
        expect((await http().get(`/v1/documents/${docs[title]}/`).set(limited).expect(404)).body).toEqual(
          notFound('Document', docs[title]),
        );
    });

    it('delete: a document of another collection is a 404 and stays', async () => {
      await http().delete(`/v1/documents/${docs['Initech manual']}/`).set(limited).expect(404);
      await http().get(`/v1/documents/${docs['Initech manual']}/`).set(alice.auth).expect(200);
      const mine = await http()
        .post('/v1/documents/')
        .set(limited)
        .send({ title: 'Disposable', content: 'To be deleted.', collection_id: globex })
        .expect(201);
      await http().delete(`/v1/documents/${mine.body.id}/`).set(limited).expect(204);
    });

    it('upload (JSON, multipart, batch): into the first of its own without collection_id; another is a 404', async () => {
      const json = await http().post('/v1/documents/').set(limited).send({ title: 'J', content: 'Json.' }).expect(201);
      expect(json.body.collection_id).toBe(acme);
      const file = await http()
        .post('/v1/documents/')
        .set(limited)
        .attach('file', Buffer.from('Multipart.'), 'm.txt')
        .expect(201);
      expect(file.body.collection_id).toBe(acme);
      const batch = await http()
        .post('/v1/documents/batch/')
        .set(limited)
        .send({ documents: [{ title: 'B', content: 'Batch.' }] })
        .expect(201);
      expect(batch.body.results[0].collection_id).toBe(acme);
      const into = await http()
        .post('/v1/documents/')
        .set(limited)
        .send({ title: 'G', content: 'Into Globex.', collection_id: globex })
        .expect(201);
      expect(into.body.collection_id).toBe(globex);

      for (const id of [other, 'default']) {
        expect(
          (
            await http()
              .post('/v1/documents/')
              .set(limited)
              .send({ title: 'X', content: 'No.', collection_id: id })
              .expect(404)
          ).body,
        ).toEqual(notFound('Collection', id));
        await http()
          .post('/v1/documents/')
          .set(limited)
          .field('collection_id', id)
          .attach('file', Buffer.from('No.'), 'x.txt')
          .expect(404);
        await http()
          .post('/v1/documents/batch/')
          .set(limited)
          .send({ collection_id: id, documents: [{ title: 'X', content: 'No.' }] })
          .expect(404);
      }
      const stored = await test.db.query(`SELECT count(*)::int AS n FROM documents WHERE title IN ('X', 'x.txt')`);
      expect(stored.rows[0].n).toBe(0);
    });
  });

  describe('MCP', () => {
    it('fetch: a document (or a passage) of another collection is a tool error, never its text', async () => {
      const passage = (
        await http()
          .post('/v1/search/')
          .set(alice.auth)
          .send({ query: 'turbine secrets', collection_ids: [other] })
          .expect(200)
      ).body.results[0].chunk_id as string;
      for (const id of [docs['Initech manual'], passage, docs['Default manual']]) {
        const answer = await http()
          .post('/mcp')
          .set(limited)
          .set('Accept', 'application/json, text/event-stream')
          .set('MCP-Protocol-Version', '2025-06-18')
          .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fetch', arguments: { id } } });
        expect(answer.status).toBe(200);
        expect(answer.text).not.toContain('nobody else may read');
        expect(answer.text).not.toContain('turbine history');
        expect(answer.body.result.isError).toBe(true);
      }
      const own = await http()
        .post('/mcp')
        .set(limited)
        .set('Accept', 'application/json, text/event-stream')
        .set('MCP-Protocol-Version', '2025-06-18')
        .send({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'fetch', arguments: { id: docs['Acme manual'] } },
        })
        .expect(200);
      expect(own.body.result.structuredContent.title).toBe('Acme manual');
    });
  });

  describe('the organization', () => {
    it("cannot do an admin's work (invite, change members, PATCH the organization), even its owner's key: 403", async () => {
      const denied = { detail: 'You do not have permission to perform this action.' };
      const invited = await http()
        .post('/v1/organizations/current/invitations/')
        .set(limited)
        .send({ email: 'new-admin@example.com', role: 'admin' })
        .expect(403);
      expect(invited.body).toEqual(denied);
      const patched = await http()
        .patch('/v1/organizations/current/')
        .set(limited)
        .send({ allowed_domains: [] })
        .expect(403);
      expect(patched.body).toEqual(denied);
      await http().get('/v1/organizations/current/invitations/').set(limited).expect(403);
      // What a viewer may read stays readable.
      await http().get('/v1/organizations/current/').set(limited).expect(200);
    });
  });

  describe('webhooks', () => {
    it("cannot manage the organization's webhooks (their events name every collection's documents): 403", async () => {
      const denied = { detail: 'You do not have permission to perform this action.' };
      expect((await http().get('/v1/webhooks/').set(limited).expect(403)).body).toEqual(denied);
      const created = await http()
        .post('/v1/webhooks/')
        .set(limited)
        .send({ url: 'https://hooks.example.com/kqs', events: ['document.indexed'] })
        .expect(403);
      expect(created.body).toEqual(denied);
      await http().get('/v1/webhooks/').set(alice.auth).expect(200);
    });
  });

  describe('Idempotency-Key', () => {
    it("another key's stored answer is never replayed to a key limited to other collections (422)", async () => {
      const initech = await partnerKey(test, alice, { collection_ids: [other] });
      const body = { query: 'turbine secrets' };
      const first = await http()
        .post('/v1/search/')
        .set(bearer(initech.key))
        .set('Idempotency-Key', 'shared-1')
        .send(body)
        .expect(200);
      expect(first.body.results.map((s: Source) => s.title)).toEqual(['Initech manual']);
      const replayed = await http().post('/v1/search/').set(limited).set('Idempotency-Key', 'shared-1').send(body);
      expect(replayed.status).toBe(422);
      expect(replayed.body).toEqual({ detail: 'This Idempotency-Key was already used with a different request.' });
      const path = `/v1/vector_stores/${other}/search`;
      await http()
        .post(path)
        .set(bearer(initech.key))
        .set('Idempotency-Key', 'shared-2')
        .send({ query: 'turbine' })
        .expect(200);
      const store = await http().post(path).set(limited).set('Idempotency-Key', 'shared-2').send({ query: 'turbine' });
      expect(store.status).toBe(422);
      expect(JSON.stringify(store.body)).not.toContain('Initech');
      // The same key again is still a replay.
      const again = await http()
        .post('/v1/search/')
        .set(bearer(initech.key))
        .set('Idempotency-Key', 'shared-1')
        .send(body)
        .expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });
  });

  describe('files', () => {
    it('a file uploaded by a wider caller and attached nowhere is a 404 to the key: not listed, read, attached or deleted', async () => {
      const uploaded = await http()
        .post('/v1/files')
        .set(alice.auth)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('The Initech payroll: turbine bonuses.'), 'payroll.txt')
        .expect(201);
      const id = uploaded.body.id as string;
      const listed = await http().get('/v1/files').set(limited).expect(200);
      expect(listed.body.data.map((f: { id: string }) => f.id)).not.toContain(id);
      await http().get(`/v1/files/${id}`).set(limited).expect(404);
      await http().post(`/v1/vector_stores/${acme}/files`).set(limited).send({ file_id: id }).expect(404);
      await http().delete(`/v1/files/${id}`).set(limited).expect(404);
      await http().get(`/v1/files/${id}`).set(alice.auth).expect(200);
      // The key's own upload it reaches; so does a file attached to one of its collections.
      const mine = await http()
        .post('/v1/files')
        .set(limited)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('Acme turbine notes.'), 'notes.txt')
        .expect(201);
      await http().get(`/v1/files/${mine.body.id}`).set(limited).expect(200);
      await http().post(`/v1/vector_stores/${acme}/files`).set(alice.auth).send({ file_id: id }).expect(201);
      await http().get(`/v1/files/${id}`).set(limited).expect(200);
    });
  });

  describe('collections', () => {
    it('lists and reads only its own; another is a 404; it cannot create, change or delete another', async () => {
      const list = await http().get('/v1/collections/').set(limited).expect(200);
      expect(list.body.results.map((c: { id: string }) => c.id)).toEqual([acme, globex]);
      expect(list.body.count).toBe(2);
      await http().get(`/v1/collections/${acme}/`).set(limited).expect(200);
      for (const id of [other, 'default']) {
        await http().get(`/v1/collections/${id}/`).set(limited).expect(404);
        await http().patch(`/v1/collections/${id}/`).set(limited).send({ description: 'x' }).expect(404);
        await http().delete(`/v1/collections/${id}/`).set(limited).expect(404);
      }
      expect((await http().post('/v1/collections/').set(limited).send({ name: 'New' }).expect(403)).body).toEqual({
        detail: 'You do not have permission to perform this action.',
      });
    });

    it('a key whose collections were all deleted finds nothing: 404 naming the collection', async () => {
      const doomed = await collection('Doomed');
      const orphan = await partnerKey(test, alice, { collection_ids: [doomed] });
      await http().delete(`/v1/collections/${doomed}/`).set(alice.auth).expect(204);
      expect(
        (await http().post('/v1/search/').set(bearer(orphan.key)).send({ query: 'turbine' }).expect(404)).body,
      ).toEqual(notFound('Collection', doomed));
      await http().post('/v1/documents/').set(bearer(orphan.key)).send({ title: 'X', content: 'No.' }).expect(404);
      expect((await http().get('/v1/documents/').set(bearer(orphan.key)).expect(404)).body).toEqual(
        notFound('Collection', doomed),
      );
    });
  });
});
