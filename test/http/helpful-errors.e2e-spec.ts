import { createKey, signUp, type SignedInUser, type TestApp } from '../support/app.js';
import { KEYS } from '../support/api-keys.js';
import { expectNoStoredChange, NOT_FOUND, notFound } from '../support/core.js';
import { createDomain, creditsUsed, signInAdmin, startWithHandbook } from '../support/knowledge.js';

const NOT_ALLOWED = 'This field is not allowed.';
const RESERVED_NAME = 'This name is reserved (every JavaScript object has it); use another.';

/** Errors that say what is wrong (issue 20): which field is unknown, which resource is missing. */
describe('errors that say what is wrong', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    ({ test } = await startWithHandbook());
    alice = await signUp(test);
    bob = await signUp(test);
  });
  afterAll(() => test.close());

  describe('unknown body fields', () => {
    it('refuses a misspelt field with a 400 naming it, and spends nothing', async () => {
      const response = await test
        .http()
        .post('/v1/query/')
        .set(alice.auth)
        .send({ query: 'How do I rotate a key?', topk: 1 })
        .expect(400);
      expect(response.body).toEqual({ detail: `topk: ${NOT_ALLOWED}`, fields: { topk: [NOT_ALLOWED] } });
      expect(await creditsUsed(test, alice.id)).toBe(0);
    });

    it('names an unknown field on every kind of JSON body, and stores nothing', async () => {
      await expectNoStoredChange(test, async () => {
        const cases: [string, string, Record<string, unknown>][] = [
          ['post', '/auth/users/', { email: 'x@example.com', password: 'a long password', username: 'x' }],
          ['post', KEYS, { name: 'ci', scope: ['query'] }],
          ['post', '/v1/documents/', { title: 'T', content: 'C', tags: ['a'] }],
          ['post', '/v1/search/', { query: 'keys', limit: 3 }],
          ['post', '/v1/chat/sessions/', { title: 'Chat', model: 'private' }],
        ];
        for (const [, path, body] of cases) {
          const extra = Object.keys(body).at(-1)!;
          const response = await test.http().post(path).set(alice.auth).send(body);
          expect({ path, status: response.status, body: response.body }).toEqual({
            path,
            status: 400,
            body: { detail: `${extra}: ${NOT_ALLOWED}`, fields: { [extra]: [NOT_ALLOWED] } },
          });
        }
      });
    });

    it('echoes neither a long unknown field name nor thousands of them back whole', async () => {
      const body: Record<string, unknown> = { query: 'How do I rotate a key?' };
      for (let i = 0; i < 2_000; i += 1) body[`f${i}${'x'.repeat(200)}`] = 1;
      const response = await test.http().post('/v1/search/').set(alice.auth).send(body).expect(400);
      expect(response.body.detail).toBe(`f0${'x'.repeat(62)}…: ${NOT_ALLOWED}`);
      expect(Object.keys(response.body.fields)).toHaveLength(20);
      expect(response.text.length).toBeLessThan(3_000);
    });

    it('names an unknown field inside a batch by its document', async () => {
      const response = await test
        .http()
        .post('/v1/documents/batch/')
        .set(alice.auth)
        .send({
          documents: [
            { title: 'A', content: 'a' },
            { title: 'B', content: 'b', tittle: 'x' },
          ],
        })
        .expect(400);
      expect(response.body.detail).toBe(`documents[1].tittle: ${NOT_ALLOWED}`);
    });

    it('refuses a field named like a member of every JavaScript object, which the validation dropped silently', async () => {
      const cases: [string, string, string][] = [
        ['/v1/search/', '{"query":"wombat rota","valueOf":1}', 'valueOf'],
        ['/v1/query/', '{"query":"wombat rota","constructor":{"top_k":1}}', 'constructor'],
        ['/v1/documents/', '{"title":"T","content":"C","toString":"x"}', 'toString'],
      ];
      await expectNoStoredChange(test, async () => {
        for (const [path, raw, field] of cases) {
          const response = await test
            .http()
            .post(path)
            .set(alice.auth)
            .set('Content-Type', 'application/json')
            .send(raw);
          expect({ path, raw, status: response.status, body: response.body }).toEqual({
            path,
            raw,
            status: 400,
            body: { detail: `${field}: ${RESERVED_NAME}`, fields: { [field]: [RESERVED_NAME] } },
          });
        }
      });
    });

    it('keeps such names as ordinary metadata names, where the keys are the client data', async () => {
      const upload = (metadata: object) =>
        test
          .http()
          .post('/v1/documents/')
          .set(bob.auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ title: 'Rota', content: 'The wombat rota lives in the ops wiki.', metadata }))
          .expect(201);
      const marked = await upload({ toString: 'x', valueOf: 2 });
      await upload({ team: 'ops' });
      expect(marked.body.metadata).toEqual({ toString: 'x', valueOf: 2 });
      for (const filter of ['{"toString":"x"}', '{"valueOf":{"$gt":1}}', '{"toString":{"$in":["x"]}}']) {
        const response = await test
          .http()
          .post('/v1/search/')
          .set(bob.auth)
          .set('Content-Type', 'application/json')
          .send(`{"query":"wombat rota","filter":${filter}}`)
          .expect(200);
        expect({
          filter,
          ids: response.body.results.map((result: { document_id: string }) => result.document_id),
        }).toEqual({
          filter,
          ids: [marked.body.id],
        });
      }
    });

    it('refuses a body nested thousands of levels deep with a 400, on the strict and the OpenAI routes alike (it was a 500)', async () => {
      const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
      const detail = 'body: Nested more than 32 levels deep.';
      const search = await test
        .http()
        .post('/v1/search/')
        .set(alice.auth)
        .set('Content-Type', 'application/json')
        .send(`{"query":"wombat","filter":${deep}}`);
      expect({ status: search.status, detail: search.body.detail }).toEqual({ status: 400, detail });
      const completion = await test
        .http()
        .post('/v1/chat/completions')
        .set(alice.auth)
        .set('Content-Type', 'application/json')
        .send(`{"model":"private","messages":[{"role":"user","content":"wombat"}],"tools":${deep}}`);
      expect({ status: completion.status, detail: completion.body.detail }).toEqual({ status: 400, detail });
      // With an Idempotency-Key the request's hash (JSON.stringify) read the body before validation did.
      const keyed = await test
        .http()
        .post('/v1/search/')
        .set(alice.auth)
        .set('Idempotency-Key', 'deep-body')
        .set('Content-Type', 'application/json')
        .send(`{"query":"wombat","filter":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
      expect({ status: keyed.status, detail: keyed.body.detail }).toEqual({ status: 400, detail });
    });

    it('keeps accepting OpenAI’s own fields on the OpenAI-compatible route', async () => {
      const key = await createKey(test, alice);
      const response = await test
        .http()
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${key.key}`)
        .send({
          model: 'private',
          messages: [{ role: 'user', content: 'How do I rotate a key?', name: 'ada' }],
          top_p: 1,
          user: 'ada',
          n: 1,
        })
        .expect(200);
      expect(response.body.object).toBe('chat.completion');
    });
  });

  describe('404s that say which resource', () => {
    it('names an unknown domain, and answers the same for an inactive one', async () => {
      const query = (domain: string) =>
        test.http().post('/v1/query/').set(alice.auth).send({ query: 'rotate', domain });
      expect((await query('medicine').expect(404)).body).toEqual(notFound('Domain', 'medicine'));
      const admin = await signInAdmin(test);
      await createDomain(test, 'dormant', [{ title: 'Old', content: 'Rotate keys yearly.' }]);
      await test.http().patch('/v1/domains/dormant/').set(admin.auth).send({ is_active: false }).expect(200);
      expect((await query('dormant').expect(404)).body).toEqual(notFound('Domain', 'dormant'));
      expect((await test.http().get('/v1/domains/medicine/').set(alice.auth).expect(404)).body).toEqual(
        notFound('Domain', 'medicine'),
      );
      expect((await test.http().delete('/v1/regions/atlantis/').set(admin.auth).expect(404)).body).toEqual(
        notFound('Region', 'atlantis'),
      );
    });

    it('clips a long name it quotes back to 64 characters, as every echo is', async () => {
      const id = 'd'.repeat(90);
      expect((await test.http().get(`/v1/documents/${id}/`).set(alice.auth).expect(404)).body).toEqual({
        detail: `Document "${'d'.repeat(64)}…" not found.`,
      });
    });

    it('names an unknown model, in both of the OpenAI routes', async () => {
      expect((await test.http().get('/v1/models/medicine').set(alice.auth).expect(404)).body).toMatchObject(
        notFound('Model', 'medicine'),
      );
      const completion = await test
        .http()
        .post('/v1/chat/completions')
        .set(alice.auth)
        .send({ model: 'medicine', messages: [{ role: 'user', content: 'hi' }] })
        .expect(404);
      expect(completion.body.detail).toBe('Model "medicine" not found.');
      expect(completion.body.error.message).toBe('Model "medicine" not found.');
    });

    it('answers another organization’s document, session and key exactly as an unknown one', async () => {
      const document = await test
        .http()
        .post('/v1/documents/')
        .set(bob.auth)
        .send({ title: 'Bob only', content: 'Private.' })
        .expect(201);
      const session = await test.http().post('/v1/chat/sessions/').set(bob.auth).send({}).expect(201);
      const key = await createKey(test, bob);
      const unknown = '7f1d1c8e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
      const cases: [string, string, string][] = [
        ['Document', `/v1/documents/${document.body.id}/`, '/v1/documents/'],
        ['Session', `/v1/chat/sessions/${session.body.id}/`, '/v1/chat/sessions/'],
      ];
      for (const [kind, foreign, base] of cases) {
        const id = foreign.split('/').at(-2)!;
        expect((await test.http().get(foreign).set(alice.auth).expect(404)).body).toEqual(notFound(kind, id));
        expect((await test.http().get(`${base}${unknown}/`).set(alice.auth).expect(404)).body).toEqual(
          notFound(kind, unknown),
        );
        expect((await test.http().get(`${base}not-an-id/`).set(alice.auth).expect(404)).body).toEqual(
          notFound(kind, 'not-an-id'),
        );
      }
      expect((await test.http().post(`${KEYS}${key.id}/revoke/`).set(alice.auth).expect(404)).body).toEqual(
        notFound('API key', key.id),
      );
    });

    it('keeps the unknown route’s verbatim "Not found."', async () => {
      expect((await test.http().get('/v1/no-such-thing/').set(alice.auth).expect(404)).body).toEqual(NOT_FOUND);
    });
  });

  it('names the missing file part of a multipart upload', async () => {
    const response = await test.http().post('/v1/documents/').set(alice.auth).field('title', 'No file').expect(400);
    expect(response.body).toEqual({
      detail: 'file: This field is required.',
      fields: { file: ['This field is required.'] },
    });
  });
});
