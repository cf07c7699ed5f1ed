import { A_MEMBER_ID, AN_INVITATION_TOKEN, AN_ORGANIZATION_ID } from '../../src/openapi/request-examples.js';
import { ADMIN, signIn, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';

interface MediaType {
  example?: unknown;
}
interface Document {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, MediaType> } }>>;
}

/** The placeholder the token examples carry: a fresh install cannot know a token in advance. */
const TOKEN_PLACEHOLDER = /^eyJ[^.]*\.<the refresh token from POST \/auth\/jwt\/create\/>$/;

interface Step {
  operation: string;
  as: 'nobody' | 'ada' | 'admin' | 'grace';
  status: number;
}

/**
 * Every JSON example on /docs, sent in this order to a fresh install (issue 20: the query's example
 * named a domain that does not exist). Path parameters are the resources the earlier steps made;
 * a token placeholder is replaced by Ada's refresh token.
 */
const STEPS: Step[] = [
  { operation: 'post /auth/users/', as: 'nobody', status: 201 },
  { operation: 'post /auth/jwt/create/', as: 'nobody', status: 200 },
  { operation: 'post /auth/jwt/refresh/', as: 'nobody', status: 200 },
  { operation: 'post /auth/jwt/verify/', as: 'nobody', status: 200 },
  { operation: 'post /v1/billings/api-keys/', as: 'ada', status: 201 },
  { operation: 'patch /v1/billings/api-keys/{keyId}/update/', as: 'ada', status: 200 },
  { operation: 'post /v1/billings/api-keys/{keyId}/rotate/', as: 'ada', status: 201 },
  { operation: 'patch /v1/organizations/current/', as: 'ada', status: 200 },
  { operation: 'patch /v1/billings/organizations/{organizationId}/subscription/', as: 'admin', status: 200 },
  { operation: 'post /v1/collections/', as: 'ada', status: 201 },
  { operation: 'patch /v1/collections/{id}/', as: 'ada', status: 200 },
  { operation: 'post /v1/documents/', as: 'ada', status: 201 },
  { operation: 'post /v1/documents/batch/', as: 'ada', status: 201 },
  { operation: 'post /v1/regions/', as: 'admin', status: 201 },
  { operation: 'patch /v1/regions/{slug}/', as: 'admin', status: 200 },
  { operation: 'post /v1/domains/', as: 'admin', status: 201 },
  { operation: 'patch /v1/domains/{slug}/', as: 'admin', status: 200 },
  { operation: 'post /v1/domains/{slug}/documents/', as: 'admin', status: 201 },
  { operation: 'post /v1/query/', as: 'ada', status: 200 },
  { operation: 'post /v1/search/', as: 'ada', status: 200 },
  { operation: 'post /v1/chat/sessions/', as: 'ada', status: 201 },
  { operation: 'patch /v1/chat/sessions/{sessionId}/', as: 'ada', status: 200 },
  { operation: 'post /v1/chat/sessions/{sessionId}/messages/', as: 'ada', status: 201 },
  { operation: 'post /v1/chat/completions/', as: 'ada', status: 200 },
  { operation: 'post /v1/vector_stores/', as: 'ada', status: 201 },
  { operation: 'post /v1/vector_stores/{id}/', as: 'ada', status: 200 },
  { operation: 'post /v1/vector_stores/{id}/files/', as: 'ada', status: 201 },
  { operation: 'post /v1/vector_stores/{id}/search/', as: 'ada', status: 200 },
  { operation: 'post /v1/webhooks/', as: 'ada', status: 201 },
  { operation: 'patch /v1/webhooks/{webhookId}/', as: 'ada', status: 200 },
  // Teams: Ada invites Grace, who joins, is made an admin, becomes the owner and switches to it.
  { operation: 'post /v1/organizations/current/invitations/', as: 'ada', status: 201 },
  { operation: 'post /v1/invitations/accept/', as: 'grace', status: 200 },
  { operation: 'patch /v1/organizations/current/members/{userId}/', as: 'ada', status: 200 },
  { operation: 'post /v1/organizations/current/transfer-ownership/', as: 'ada', status: 200 },
  { operation: 'post /auth/jwt/switch/', as: 'grace', status: 200 },
  { operation: 'post /auth/jwt/logout/', as: 'nobody', status: 204 },
];

describe('the request examples on /docs', () => {
  let test: TestApp;
  let document: Document;

  beforeAll(async () => {
    // The webhook's example names a public host, which resolves on a real install but not here.
    test = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    document = (await test.http().get('/openapi.json').expect(200)).body;
  });
  afterAll(() => test.close());

  const bodies = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.entries(operation.requestBody?.content ?? {}).map(([mediaType, media]) => ({
          operation: `${method} ${path}`,
          mediaType,
          media,
        })),
      ),
    );

  it('give every request body a whole example', () => {
    const missing = bodies().filter(({ media }) => typeof media.example !== 'object' || media.example === null);
    expect(missing.map(({ operation, mediaType }) => `${operation} ${mediaType}`)).toEqual([]);
  });

  it('cover every operation with a JSON body in the walk below', () => {
    const withJson = bodies()
      .filter(({ mediaType }) => mediaType === 'application/json')
      .map(({ operation }) => operation);
    expect(STEPS.map((step) => step.operation).sort()).toEqual([...new Set(withJson)].sort());
  });

  it('all work against a fresh install, in order', async () => {
    const admin = await signIn(test, ADMIN.email, ADMIN.password);
    let ada: SignedInUser | undefined;
    let refresh = '';
    const params: Record<string, string> = {};
    // The invitation's example names Grace: she signs up on her own, as an invited person would.
    const grace = await signUp(test, 'grace@example.com');
    params.userId = (await test.http().get('/auth/users/me/').set(grace.auth)).body.id;
    const placeholders = new Map<string, string>();
    for (const step of STEPS) {
      const [method, path] = step.operation.split(' ');
      const example = document.paths[path][method].requestBody?.content['application/json'].example;
      const body = JSON.parse(
        JSON.stringify(example, (_key, value: unknown) =>
          typeof value === 'string' && TOKEN_PLACEHOLDER.test(value)
            ? refresh
            : (placeholders.get(value as string) ?? value),
        ),
      ) as Record<string, unknown>;
      const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => params[name]);
      // The attach example names the file `POST /v1/files` answered (a multipart upload, so not in this walk).
      if (step.operation === 'post /v1/vector_stores/{id}/files/')
        body.file_id = (
          await test
            .http()
            .post('/v1/files/')
            .set(ada!.auth)
            .field('purpose', 'assistants')
            .attach('file', Buffer.from('Restart the ingest worker when the queue backs up.'), 'runbook.md')
            .expect(201)
        ).body.id;
      let request = test.http()[method as 'post' | 'patch'](url);
      if (step.as === 'ada' && ada) request = request.set(ada.auth);
      if (step.as === 'admin') request = request.set(admin.auth);
      if (step.as === 'grace') request = request.set(grace.auth);
      const response = await request.send(body);
      expect({ operation: step.operation, status: response.status, body: response.body as unknown }).toMatchObject({
        operation: step.operation,
        status: step.status,
      });
      if (step.operation === 'post /auth/jwt/create/') {
        ada = await signIn(test, body.email as string, body.password as string);
        refresh = ada.refresh;
        params.organizationId = (await test.http().get('/auth/users/me/').set(ada.auth)).body.organization_id;
        placeholders.set(AN_ORGANIZATION_ID, params.organizationId);
        placeholders.set(A_MEMBER_ID, params.userId);
      }
      if (step.operation === 'post /v1/billings/api-keys/') params.keyId = response.body.id;
      if (step.operation === 'post /v1/regions/') params.slug = response.body.slug;
      if (step.operation === 'post /v1/domains/') params.slug = response.body.slug;
      if (step.operation === 'post /v1/chat/sessions/') params.sessionId = response.body.id;
      if (step.operation === 'post /v1/webhooks/') params.webhookId = response.body.id;
      if (step.operation === 'post /v1/organizations/current/invitations/')
        placeholders.set(AN_INVITATION_TOKEN, response.body.token);
      if (step.operation === 'post /v1/collections/' || step.operation === 'post /v1/vector_stores/')
        params.id = response.body.id;
      // The query's example finds the document the documents' example stored.
      if (step.operation === 'post /v1/query/') expect(response.body.sources[0].title).toBe('Runbook');
    }
  });
});
