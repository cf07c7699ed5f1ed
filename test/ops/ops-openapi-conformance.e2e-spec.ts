import type { Response as HttpResponse } from 'supertest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signInAdmin } from '../support/knowledge.js';
import {
  deref,
  mismatches,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  type Schema,
} from '../support/openapi.js';

describe('OpenAPI document: what the service really answers', () => {
  let test: TestApp;
  let document: OpenApiDocument;
  const operation = (path: string, method: string): Operation => document.paths[path][method];
  /** The schema a 2xx (or any) response gives for a media type, references followed. */
  const responseSchema = (path: string, method: string, status: string, mediaType = 'application/json'): Schema =>
    deref(document, deref(document, operation(path, method).responses[status]).content![mediaType].schema!);

  beforeAll(async () => {
    // No webhook is sent from here (its endpoint is a public address this machine cannot reach).
    test = await startTestApp({ WEBHOOK_DELIVERY_CONCURRENCY: '0' });
    document = (await test.http().get('/openapi.json').expect(200)).body;
  });
  afterAll(() => test.close());

  it('matches what the service really answers, on every operation', async () => {
    const http = () => test.http();
    const exercised = new Set<string>();
    /** The response's status is documented for the operation, and its body matches that schema exactly. */
    const check = (method: string, path: string, response: HttpResponse, expectedStatus: number) => {
      const at = `${method.toUpperCase()} ${path} -> ${response.status}`;
      expect({ at, status: response.status }).toEqual({ at, status: expectedStatus });
      const documented = operation(path, method).responses[String(response.status)];
      expect({ at, documented: Boolean(documented) }).toEqual({ at, documented: true });
      const resolved = deref(document, documented);
      if (response.status === 204) {
        expect({ at, content: resolved.content }).toEqual({ at, content: undefined });
      } else {
        const mediaType = response.headers['content-type'].split(';')[0];
        const media = resolved.content?.[mediaType];
        expect({ at, mediaType, documented: Boolean(media) }).toEqual({ at, mediaType, documented: true });
        if (mediaType === 'application/json')
          expect({ at, problems: mismatches(document, media!.schema, response.body) }).toEqual({ at, problems: [] });
      }
      if (response.status < 300) exercised.add(`${method} ${path}`);
      return response;
    };

    const admin = await signInAdmin(test);
    const email = `schemas-${Date.now()}@example.com`;
    const password = 'correct horse battery';

    // Auth.
    check('post', '/auth/users/', await http().post('/auth/users/').send({ email, password }), 201);
    check('post', '/auth/users/', await http().post('/auth/users/').send({ email, password }), 400);
    const tokens = check(
      'post',
      '/auth/jwt/create/',
      await http().post('/auth/jwt/create/').send({ email, password }),
      200,
    ).body;
    check(
      'post',
      '/auth/jwt/create/',
      await http().post('/auth/jwt/create/').send({ email, password: 'wrong password' }),
      401,
    );
    check('post', '/auth/jwt/refresh/', await http().post('/auth/jwt/refresh/').send({ refresh: tokens.refresh }), 200);
    check('post', '/auth/jwt/refresh/', await http().post('/auth/jwt/refresh/').send({ refresh: tokens.access }), 401);
    check('post', '/auth/jwt/verify/', await http().post('/auth/jwt/verify/').send({ token: tokens.access }), 200);
    check('post', '/auth/jwt/verify/', await http().post('/auth/jwt/verify/').send({}), 400);
    const auth = { Authorization: `Bearer ${tokens.access}` };
    const me = check('get', '/auth/users/me/', await http().get('/auth/users/me/').set(auth), 200).body;
    check('get', '/auth/users/me/', await http().get('/auth/users/me/'), 401);
    check(
      'get',
      '/auth/users/me/',
      await http().get('/auth/users/me/').set({ Authorization: 'Bearer not.a.token' }),
      401,
    );
    check('get', '/auth/users/me/', await http().get('/auth/users/me/').set({ 'X-API-Key': 'svc_not_a_key' }), 401);

    // API keys.
    const key = check(
      'post',
      '/v1/billings/api-keys/',
      await http().post('/v1/billings/api-keys/').set(auth).send({ name: 'schemas' }),
      201,
    ).body;
    check('post', '/v1/billings/api-keys/', await http().post('/v1/billings/api-keys/').set(auth).send({}), 400);
    check('get', '/v1/billings/api-keys/', await http().get('/v1/billings/api-keys/').set(auth), 200);
    check(
      'get',
      '/v1/billings/api-keys/',
      await http().get('/v1/billings/api-keys/').set({ 'X-API-Key': key.key }),
      401,
    );
    check(
      'patch',
      '/v1/billings/api-keys/{keyId}/update/',
      await http()
        .patch(`/v1/billings/api-keys/${key.id}/update/`)
        .set(auth)
        .send({ expires_at: '2999-01-01T00:00:00Z' }),
      200,
    );
    check(
      'patch',
      '/v1/billings/api-keys/{keyId}/update/',
      await http().patch(`/v1/billings/api-keys/${key.id}/update/`).set(auth).send({}),
      400,
    );
    const rotated = check(
      'post',
      '/v1/billings/api-keys/{keyId}/rotate/',
      await http().post(`/v1/billings/api-keys/${key.id}/rotate/`).set(auth),
      201,
    ).body;
    check(
      'post',
      '/v1/billings/api-keys/{keyId}/rotate/',
      await http().post(`/v1/billings/api-keys/${key.id}/rotate/`).set(auth),
      400,
    );
    check(
      'post',
      '/v1/billings/api-keys/{keyId}/revoke/',
      await http().post(`/v1/billings/api-keys/${rotated.id}/revoke/`).set(auth),
      200,
    );
    check(
      'post',
      '/v1/billings/api-keys/{keyId}/revoke/',
      await http().post('/v1/billings/api-keys/00000000-0000-4000-8000-000000000000/revoke/').set(auth),
      404,
    );
    const spare = (await http().post('/v1/billings/api-keys/').set(auth).send({ name: 'spare' }).expect(201)).body;
    check(
      'delete',
      '/v1/billings/api-keys/{keyId}/',
      await http().delete(`/v1/billings/api-keys/${spare.id}/`).set(auth),
      204,
    );
    const live = (await http().post('/v1/billings/api-keys/').set(auth).send({ name: 'live' }).expect(201)).body;
    const byKey = { 'X-API-Key': live.key };
    check('get', '/v1/billings/api-keys/events/', await http().get('/v1/billings/api-keys/events/').set(auth), 200);
    check('get', '/v1/billings/api-keys/events/', await http().get('/v1/billings/api-keys/events/').set(byKey), 401);

    // Regions and domains (administrators).
    const suffix = Date.now().toString(36);
    const [region, domain, other] = [`r-${suffix}`, `d-${suffix}`, `o-${suffix}`];
    check(
      'post',
      '/v1/regions/',
      await http().post('/v1/regions/').set(admin.auth).send({ name: 'Region', slug: region }),
      201,
    );
    check(
      'post',
      '/v1/regions/',
      await http()
        .post('/v1/regions/')
        .set(auth)
        .send({ name: 'Region', slug: `x-${suffix}` }),
      403,
    );
    check(
      'patch',
      '/v1/regions/{slug}/',
      await http().patch(`/v1/regions/${region}/`).set(admin.auth).send({ name: 'Renamed' }),
      200,
    );
    check('get', '/v1/regions/', await http().get('/v1/regions/').set(byKey), 200);
    const domainBody = { name: 'Handbook', slug: domain, description: 'How the service works', region };
    check('post', '/v1/domains/', await http().post('/v1/domains/').set(admin.auth).send(domainBody), 201);
    check('post', '/v1/domains/', await http().post('/v1/domains/').set(admin.auth).send(domainBody), 400);
    await http().post('/v1/domains/').set(admin.auth).send({ name: 'Other', slug: other }).expect(201);
    check('get', '/v1/domains/', await http().get('/v1/domains/').set(auth), 200);
    check('get', '/v1/domains/{slug}/', await http().get(`/v1/domains/${domain}/`).set(byKey), 200);
    check('get', '/v1/domains/{slug}/', await http().get(`/v1/domains/no-such-${suffix}/`).set(auth), 404);
    check(
      'patch',
      '/v1/domains/{slug}/',
      await http().patch(`/v1/domains/${domain}/`).set(admin.auth).send({ description: 'Keys and quotas' }),
      200,
    );
    const content = 'To rotate an API key, call the rotate endpoint; the old key stops working at once.';
    const domainDocument = check(
      'post',
      '/v1/domains/{slug}/documents/',
      await http()
        .post(`/v1/domains/${domain}/documents/`)
        .set(admin.auth)
        .send({ title: 'Rotating API keys', content, metadata: { section: 'keys', page: 12 } }),
      201,
    ).body;
    check(
      'post',
      '/v1/domains/{slug}/documents/',
      await http()
        .post(`/v1/domains/${domain}/documents/`)
        .set(admin.auth)
        .attach('file', Buffer.from('# Quotas\n\nEach query costs one credit.'), 'quotas.md'),
      201,
    );
    await http()
      .post(`/v1/domains/${other}/documents/`)
      .set(admin.auth)
      .send({ title: 'Penguins', content: 'Penguins live in the south.' })
      .expect(201);
    check(
      'get',
      '/v1/domains/{slug}/documents/',
      await http().get(`/v1/domains/${domain}/documents/?limit=1`).set(admin.auth),
      200,
    );
    check(
      'get',
      '/v1/domains/{slug}/documents/{id}/',
      await http().get(`/v1/domains/${domain}/documents/${domainDocument.id}/`).set(admin.auth),
      200,
    );

    // Organization.
    check('get', '/v1/organizations/current/', await http().get('/v1/organizations/current/').set(byKey), 200);
    check(
      'patch',
      '/v1/organizations/current/',
      await http()
        .patch('/v1/organizations/current/')
        .set(auth)
        .send({ allowed_domains: [`nope-${suffix}`] }),
      400,
    );
    check(
      'patch',
      '/v1/organizations/current/',
      await http()
        .patch('/v1/organizations/current/')
        .set(auth)
        .send({ name: 'Acme', allowed_domains: [domain] }),
      200,
    );

    // Private documents.
    const privateDocument = check(
      'post',
      '/v1/documents/',
      await http()
        .post('/v1/documents/')
        .set(byKey)
        .send({ title: 'Notes', content: 'Our rotation policy: every 90 days.' }),
      201,
    ).body;
    check(
      'post',
      '/v1/documents/',
      await http()
        .post('/v1/documents/')
        .set(auth)
        .attach('file', Buffer.from('Rotation happens quarterly.'), 'policy.txt')
        .field('title', 'Policy'),
      201,
    );
    check(
      'post',
      '/v1/documents/',
      await http().post('/v1/documents/').set(auth).attach('file', Buffer.alloc(0), 'empty.txt'),
      400,
    );
    check(
      'post',
      '/v1/documents/batch/',
      await http()
        .post('/v1/documents/batch/')
        .set(auth)
        .send({
          documents: [
            { title: 'One', content: 'First.' },
            { title: 'Two', content: 'Second.', metadata: { n: 2 } },
          ],
        }),
      201,
    );
    check(
      'post',
      '/v1/documents/batch/',
      await http()
        .post('/v1/documents/batch/')
        .set(auth)
        .send({ documents: [{ title: 'No content' }] }),
      400,
    );
    check('get', '/v1/documents/', await http().get('/v1/documents/').set(auth), 200);
    check('get', '/v1/documents/', await http().get('/v1/documents/?limit=0').set(auth), 400);
    check('get', '/v1/documents/{id}/', await http().get(`/v1/documents/${privateDocument.id}/`).set(auth), 200);
    check('get', '/v1/documents/{id}/', await http().get('/v1/documents/not-a-uuid/').set(auth), 404);

    // Collections.
    const collection = check(
      'post',
      '/v1/collections/',
      await http()
        .post('/v1/collections/')
        .set(auth)
        .send({ name: 'Tickets', metadata: { team: 'support' } }),
      201,
    ).body;
    check('post', '/v1/collections/', await http().post('/v1/collections/').set(auth).send({ name: 'tickets' }), 409);
    check('get', '/v1/collections/', await http().get('/v1/collections/?limit=1').set(byKey), 200);
    check('get', '/v1/collections/{id}/', await http().get(`/v1/collections/${collection.id}/`).set(auth), 200);
    check('get', '/v1/collections/{id}/', await http().get('/v1/collections/nope/').set(auth), 404);
    check(
      'patch',
      '/v1/collections/{id}/',
      await http().patch(`/v1/collections/${collection.id}/`).set(auth).send({ description: 'Support' }),
      200,
    );
    check(
      'patch',
      '/v1/collections/{id}/',
      await http().patch('/v1/collections/default/').set(auth).send({ name: 'main' }),
      409,
    );
    check('delete', '/v1/collections/{id}/', await http().delete('/v1/collections/default/').set(auth), 409);
    check('delete', '/v1/collections/{id}/', await http().delete(`/v1/collections/${collection.id}/`).set(auth), 204);

    // OpenAI's files and vector stores.
    const store = check(
      'post',
      '/v1/vector_stores/',
      await http()
        .post('/v1/vector_stores/')
        .set(auth)
        .send({ name: 'Store', metadata: { team: 'ops' } }),
      201,
    ).body;
    check('post', '/v1/vector_stores/', await http().post('/v1/vector_stores/').set(auth).send({ name: 'store' }), 409);
    check('get', '/v1/vector_stores/', await http().get('/v1/vector_stores/?limit=2').set(byKey), 200);
    check('get', '/v1/vector_stores/{id}/', await http().get(`/v1/vector_stores/${store.id}/`).set(auth), 200);
    check('get', '/v1/vector_stores/{id}/', await http().get('/v1/vector_stores/nope/').set(auth), 404);
    check(
      'post',
      '/v1/vector_stores/{id}/',
      await http().post(`/v1/vector_stores/${store.id}/`).set(auth).send({ name: 'Store 2' }),
      200,
    );
    const file = check(
      'post',
      '/v1/files/',
      await http()
        .post('/v1/files/')
        .set(auth)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('Rotate keys every quarter.'), 'keys.md'),
      201,
    ).body;
    check('post', '/v1/files/', await http().post('/v1/files/').set(auth).field('purpose', 'assistants'), 400);
    check('get', '/v1/files/', await http().get('/v1/files/').set(auth), 200);
    check('get', '/v1/files/{fileId}/', await http().get(`/v1/files/${file.id}/`).set(auth), 200);
    check('get', '/v1/files/{fileId}/content/', await http().get(`/v1/files/${file.id}/content/`).set(auth), 200);
    check('get', '/v1/files/{fileId}/content/', await http().get('/v1/files/nope/content/').set(auth), 404);
    check(
      'post',
      '/v1/vector_stores/{id}/files/',
      await http()
        .post(`/v1/vector_stores/${store.id}/files/`)
        .set(auth)
        .send({ file_id: file.id, attributes: { n: 1 } }),
      201,
    );
    check(
      'get',
      '/v1/vector_stores/{id}/files/',
      await http().get(`/v1/vector_stores/${store.id}/files/`).set(auth),
      200,
    );
    check(
      'get',
      '/v1/vector_stores/{id}/files/{fileId}/',
      await http().get(`/v1/vector_stores/${store.id}/files/${file.id}/`).set(auth),
      200,
    );
    check(
      'post',
      '/v1/vector_stores/{id}/search/',
      await http().post(`/v1/vector_stores/${store.id}/search/`).set(byKey).send({ query: 'rotate keys' }),
      200,
    );
    check(
      'post',
      '/v1/vector_stores/{id}/search/',
      await http()
        .post(`/v1/vector_stores/${store.id}/search/`)
        .set(auth)
        .send({ query: 'rotate', filters: { type: 'or', filters: [] } }),
      400,
    );
    check(
      'delete',
      '/v1/vector_stores/{id}/files/{fileId}/',
      await http().delete(`/v1/vector_stores/${store.id}/files/${file.id}/`).set(auth),
      200,
    );
    check('delete', '/v1/files/{fileId}/', await http().delete(`/v1/files/${file.id}/`).set(auth), 200);
    check('delete', '/v1/files/{fileId}/', await http().delete(`/v1/files/${file.id}/`).set(auth), 404);
    check('delete', '/v1/vector_stores/{id}/', await http().delete(`/v1/vector_stores/${store.id}/`).set(auth), 200);

    // Queries.
    check(
      'post',
      '/v1/query/',
      await http().post('/v1/query/').set(byKey).send({ query: 'How do I rotate an API key?', domain }),
      200,
    );
    check(
      'post',
      '/v1/query/',
      await http().post('/v1/query/').set(auth).send({ query: 'What is our rotation policy?', domain: null, top_k: 2 }),
      200,
    );
    check('post', '/v1/query/', await http().post('/v1/query/').set(auth).send({ query: ' ' }), 400);
    check(
      'post',
      '/v1/query/',
      await http()
        .post('/v1/query/')
        .set(auth)
        .send({ query: 'Penguins?', domain: `no-such-${suffix}` }),
      404,
    );
    check(
      'post',
      '/v1/query/',
      await http().post('/v1/query/').set(auth).send({ query: 'Penguins?', domain: other }),
      403,
    );
    check(
      'post',
      '/v1/search/',
      await http()
        .post('/v1/search/')
        .set(byKey)
        .send({ query: 'rotate an API key', domain, filter: { year: { $gte: 2000 } } }),
      200,
    );
    check('post', '/v1/search/', await http().post('/v1/search/').set(auth).send({ query: 'rotation' }), 200);
    check(
      'post',
      '/v1/search/',
      await http()
        .post('/v1/search/')
        .set(auth)
        .send({ query: 'rotation', filter: { year: { $foo: 1 } } }),
      400,
    );
    check(
      'post',
      '/v1/search/',
      await http()
        .post('/v1/search/')
        .set(auth)
        .send({ query: 'x', domain: `no-such-${suffix}` }),
      404,
    );
    check('post', '/v1/search/', await http().post('/v1/search/').set(auth).send({ query: 'x', domain: other }), 403);
    const address = test.server.address() as { port: number };
    const streamed = await fetch(`http://127.0.0.1:${address.port}/v1/query/`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: 'How do I rotate an API key?', domain, stream: true }),
    });
    const events = await streamed.text();
    expect(streamed.status).toBe(200);
    expect(deref(document, operation('/v1/query/', 'post').responses['200']).content).toHaveProperty(
      String(streamed.headers.get('content-type')).split(';')[0],
    );
    const done = /event: done\ndata: (.*)\n/.exec(events)?.[1];
    expect(mismatches(document, responseSchema('/v1/query/', 'post', '200'), JSON.parse(done!))).toEqual([]);

    // Chat.
    const session = check(
      'post',
      '/v1/chat/sessions/',
      await http().post('/v1/chat/sessions/').set(auth).send({ title: 'Keys', domain }),
      201,
    ).body;
    check('post', '/v1/chat/sessions/', await http().post('/v1/chat/sessions/').set(auth).send({ domain: other }), 403);
    check(
      'post',
      '/v1/chat/sessions/{sessionId}/messages/',
      await http()
        .post(`/v1/chat/sessions/${session.id}/messages/`)
        .set(byKey)
        .send({ content: 'How do I rotate a key?' }),
      201,
    );
    check('get', '/v1/chat/sessions/', await http().get('/v1/chat/sessions/').set(auth), 200);
    check('get', '/v1/chat/sessions/{sessionId}/', await http().get(`/v1/chat/sessions/${session.id}/`).set(auth), 200);
    check(
      'get',
      '/v1/chat/sessions/{sessionId}/messages/',
      await http().get(`/v1/chat/sessions/${session.id}/messages/`).set(auth),
      200,
    );
    check(
      'patch',
      '/v1/chat/sessions/{sessionId}/',
      await http().patch(`/v1/chat/sessions/${session.id}/`).set(auth).send({ title: 'Rotation' }),
      200,
    );
    check(
      'delete',
      '/v1/chat/sessions/{sessionId}/',
      await http().delete(`/v1/chat/sessions/${session.id}/`).set(auth),
      204,
    );
    check('get', '/v1/chat/sessions/{sessionId}/', await http().get(`/v1/chat/sessions/${session.id}/`).set(auth), 404);

    // OpenAI-compatible routes.
    check('get', '/v1/models/', await http().get('/v1/models/').set(auth), 200);
    check('get', '/v1/models/{model}/', await http().get(`/v1/models/${domain}/`).set(auth), 200);
    check('get', '/v1/models/{model}/', await http().get('/v1/models/no-such-model/').set(auth), 404);
    const completion = { model: domain, messages: [{ role: 'user', content: 'How do I rotate an API key?' }] };
    const completions = () => http().post('/v1/chat/completions/').set(auth);
    check('post', '/v1/chat/completions/', await completions().send(completion), 200);
    check('post', '/v1/chat/completions/', await completions().send({ model: domain }), 400);

    // Billing.
    check('get', '/v1/billings/subscription/', await http().get('/v1/billings/subscription/').set(byKey), 200);
    check('get', '/v1/billings/usage/', await http().get('/v1/billings/usage/').set(auth), 200);
    check('get', '/v1/billings/usage/daily/', await http().get('/v1/billings/usage/daily/').set(auth), 200);
    check('get', '/v1/billings/usage/keys/', await http().get('/v1/billings/usage/keys/').set(auth), 200);
    check(
      'get',
      '/v1/billings/usage/',
      await http().get('/v1/billings/usage/?from=2026-11-02&to=2026-11-01').set(auth),
      400,
    );
    const subscription = `/v1/billings/organizations/${me.organization_id}/subscription/`;
    check(
      'patch',
      '/v1/billings/organizations/{organizationId}/subscription/',
      await http().patch(subscription).set(admin.auth).send({ monthly_credits: 0 }),
      200,
    );
    check(
      'patch',
      '/v1/billings/organizations/{organizationId}/subscription/',
      await http().patch(subscription).set(byKey).send({ monthly_credits: 5 }),
      403,
    );
    check(
      'post',
      '/v1/query/',
      await http().post('/v1/query/').set(auth).send({ query: 'How do I rotate an API key?', domain }),
      402,
    );

    // Webhooks.
    const hookUrl = 'https://93.184.215.14/hooks/kqs';
    const hook = check(
      'post',
      '/v1/webhooks/',
      await http()
        .post('/v1/webhooks/')
        .set(auth)
        .send({ url: hookUrl, events: ['document.indexed'] }),
      201,
    ).body;
    check(
      'post',
      '/v1/webhooks/',
      await http()
        .post('/v1/webhooks/')
        .set(auth)
        .send({ url: 'https://127.0.0.1/', events: ['document.indexed'] }),
      400,
    );
    check('get', '/v1/webhooks/', await http().get('/v1/webhooks/').set(auth), 200);
    const hookPath = `/v1/webhooks/${hook.id}/`;
    check('get', '/v1/webhooks/{webhookId}/', await http().get(hookPath).set(auth), 200);
    check(
      'patch',
      '/v1/webhooks/{webhookId}/',
      await http()
        .patch(hookPath)
        .set(auth)
        .send({ events: ['usage.threshold'], description: 'ops' }),
      200,
    );
    check(
      'patch',
      '/v1/webhooks/{webhookId}/',
      await http()
        .patch(hookPath)
        .set(auth)
        .send({ events: ['nope'] }),
      400,
    );
    check(
      'post',
      '/v1/webhooks/{webhookId}/rotate-secret/',
      await http().post(`${hookPath}rotate-secret/`).set(auth),
      200,
    );
    const ping = check(
      'post',
      '/v1/webhooks/{webhookId}/test/',
      await http().post(`${hookPath}test/`).set(auth),
      202,
    ).body;
    check('get', '/v1/webhooks/{webhookId}/deliveries/', await http().get(`${hookPath}deliveries/`).set(auth), 200);
    check(
      'post',
      '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry/',
      await http().post(`${hookPath}deliveries/${ping.delivery_id}/retry/`).set(auth),
      202,
    );
    check('delete', '/v1/webhooks/{webhookId}/', await http().delete(hookPath).set(auth), 204);
    check('get', '/v1/webhooks/{webhookId}/', await http().get(hookPath).set(auth), 404);

    // Teams: Grace and Hal are invited and join; Hal is removed, Grace made an admin, then the owner.
    const joinAs = async (name: string) => {
      const joinerEmail = `${name}-${Date.now()}@example.com`;
      await http().post('/auth/users/').send({ email: joinerEmail, password }).expect(201);
      const joinerTokens = (await http().post('/auth/jwt/create/').send({ email: joinerEmail, password }).expect(200))
        .body;
      const joinerAuth = { Authorization: `Bearer ${joinerTokens.access}` };
      const joinerId = (await http().get('/auth/users/me/').set(joinerAuth)).body.id as string;
      const invitation = check(
        'post',
        '/v1/organizations/current/invitations/',
        await http()
          .post('/v1/organizations/current/invitations/')
          .set(auth)
          .send({ email: joinerEmail, role: 'member' }),
        201,
      ).body;
      check(
        'post',
        '/v1/organizations/current/invitations/',
        await http()
          .post('/v1/organizations/current/invitations/')
          .set(auth)
          .send({ email: joinerEmail, role: 'member' }),
        409,
      );
      check(
        'get',
        '/v1/organizations/current/invitations/',
        await http().get('/v1/organizations/current/invitations/').set(auth),
        200,
      );
      check(
        'post',
        '/v1/invitations/accept/',
        await http().post('/v1/invitations/accept/').set(joinerAuth).send({ token: invitation.token }),
        200,
      );
      check(
        'post',
        '/v1/invitations/accept/',
        await http().post('/v1/invitations/accept/').set(joinerAuth).send({ token: invitation.token }),
        400,
      );
      return { id: joinerId, auth: joinerAuth };
    };
    const grace = await joinAs('grace');
    const hal = await joinAs('hal');
    const revocable = check(
      'post',
      '/v1/organizations/current/invitations/',
      await http()
        .post('/v1/organizations/current/invitations/')
        .set(auth)
        .send({ email: 'ivy@example.com', role: 'viewer' }),
      201,
    ).body;
    check(
      'delete',
      '/v1/organizations/current/invitations/{invitationId}/',
      await http().delete(`/v1/organizations/current/invitations/${revocable.id}/`).set(auth),
      204,
    );
    check(
      'post',
      '/auth/jwt/switch/',
      await http().post('/auth/jwt/switch/').set(grace.auth).send({ organization_id: me.organization_id }),
      200,
    );
    check(
      'get',
      '/v1/organizations/current/members/',
      await http().get('/v1/organizations/current/members/').set(auth),
      200,
    );
    check(
      'patch',
      '/v1/organizations/current/members/{userId}/',
      await http().patch(`/v1/organizations/current/members/${grace.id}/`).set(auth).send({ role: 'admin' }),
      200,
    );
    check(
      'patch',
      '/v1/organizations/current/members/{userId}/',
      await http().patch(`/v1/organizations/current/members/${grace.id}/`).set(auth).send({ role: 'owner' }),
      400,
    );
    check(
      'delete',
      '/v1/organizations/current/members/{userId}/',
      await http().delete(`/v1/organizations/current/members/${hal.id}/`).set(auth),
      204,
    );
    check(
      'delete',
      '/v1/organizations/current/members/{userId}/',
      await http().delete(`/v1/organizations/current/members/${me.id}/`).set(auth),
      409,
    );
    const teamKey = (await http().post('/v1/billings/api-keys/').set(auth).send({ name: 'team' }).expect(201)).body;
    check(
      'get',
      '/v1/organizations/current/api-keys/',
      await http().get('/v1/organizations/current/api-keys/').set(auth),
      200,
    );
    check(
      'post',
      '/v1/organizations/current/api-keys/{keyId}/revoke/',
      await http().post(`/v1/organizations/current/api-keys/${teamKey.id}/revoke/`).set(auth),
      200,
    );
    check(
      'get',
      '/v1/organizations/current/events/',
      await http().get('/v1/organizations/current/events/').set(auth),
      200,
    );
    check('get', '/v1/billings/usage/members/', await http().get('/v1/billings/usage/members/').set(auth), 200);
    check(
      'post',
      '/v1/organizations/current/transfer-ownership/',
      await http().post('/v1/organizations/current/transfer-ownership/').set(auth).send({ user_id: grace.id }),
      200,
    );
    check(
      'patch',
      '/v1/organizations/current/members/{userId}/',
      await http().patch(`/v1/organizations/current/members/${grace.id}/`).set(auth).send({ role: 'viewer' }),
      409,
    );

    // Deletions, sign-out, probes.
    check('delete', '/v1/documents/{id}/', await http().delete(`/v1/documents/${privateDocument.id}/`).set(auth), 204);
    check(
      'delete',
      '/v1/domains/{slug}/documents/{id}/',
      await http().delete(`/v1/domains/${domain}/documents/${domainDocument.id}/`).set(admin.auth),
      204,
    );
    check('delete', '/v1/domains/{slug}/', await http().delete(`/v1/domains/${domain}/`).set(admin.auth), 204);
    check('delete', '/v1/regions/{slug}/', await http().delete(`/v1/regions/${region}/`).set(admin.auth), 204);
    check('delete', '/v1/regions/{slug}/', await http().delete(`/v1/regions/${region}/`).set(admin.auth), 404);
    check('post', '/auth/jwt/logout/', await http().post('/auth/jwt/logout/').send({ refresh: tokens.refresh }), 204);
    check('post', '/auth/jwt/logout/', await http().post('/auth/jwt/logout/').send({ refresh: tokens.refresh }), 401);
    check('get', '/health/', await http().get('/health/'), 200);
    check('get', '/health/ready/', await http().get('/health/ready/'), 200);
    check('get', '/metrics', await http().get('/metrics'), 200);

    const unexercised = operationsOf(document)
      .map(({ path, method }) => `${method} ${path}`)
      .filter((entry) => !exercised.has(entry));
    expect(unexercised).toEqual([]);
  });
});
