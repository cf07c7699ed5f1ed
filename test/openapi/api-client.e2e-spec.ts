import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import type { paths } from '../../web/src/api/schema.js';
import { startTestApp, type TestApp } from '../support/app.js';

const ROOT = process.cwd();
const COMMITTED = join(ROOT, 'web', 'src', 'api', 'schema.d.ts');

/**
 * The dashboard's API types are generated from the served /openapi.json (`npm run generate:api`), and
 * the client built on them (openapi-fetch) drives the service: a schema change the dashboard does not
 * follow fails here, or in `npm run typecheck`.
 */
describe('Generated API client', () => {
  let test: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    test = await startTestApp();
    const address = test.server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => test.close());

  it('has committed types that match the served document (run `npm run generate:api` when this fails)', async () => {
    const document = (await test.http().get('/openapi.json').expect(200)).body;
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    const folder = mkdtempSync(join(ROOT, 'dist', 'api-types-'));
    try {
      writeFileSync(join(folder, 'openapi.json'), JSON.stringify(document, null, 2));
      await promisify(execFile)(
        'bash',
        ['scripts/api-types.sh', join(folder, 'openapi.json'), join(folder, 'schema.d.ts')],
        { cwd: ROOT },
      );
      expect(readFileSync(join(folder, 'schema.d.ts'), 'utf8')).toEqual(readFileSync(COMMITTED, 'utf8'));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('signs up, creates a key, uploads a document and asks about it through the typed client', async () => {
    const api = createClient<paths, `${string}/json`>({ baseUrl });
    const email = `typed-client-${Date.now()}@example.com`;
    const password = 'correct horse battery';

    const registered = await api.POST('/auth/users/', { body: { email, password } });
    expect(registered.response.status).toBe(201);
    expect(registered.data?.email).toBe(email);

    const tokens = await api.POST('/auth/jwt/create/', { body: { email, password } });
    expect(tokens.response.status).toBe(200);
    const jwt = { Authorization: `Bearer ${tokens.data!.access}` };

    const created = await api.POST('/v1/billings/api-keys/', { body: { name: 'typed client' }, headers: jwt });
    expect(created.response.status).toBe(201);
    const key = created.data!.key;
    expect(key).toMatch(/^svc_/);
    const withKey = { 'X-API-Key': key };

    const listed = await api.GET('/v1/billings/api-keys/', { headers: jwt });
    expect(listed.data?.map((item) => item.id)).toEqual([created.data!.id]);

    const uploaded = await api.POST('/v1/documents/', {
      headers: withKey,
      body: {
        title: 'Rotation policy',
        content: 'API keys are rotated every ninety days by the platform team.',
        metadata: { team: 'platform' },
      },
    });
    expect(uploaded.response.status).toBe(201);
    expect(uploaded.data).toEqual(
      expect.objectContaining({ title: 'Rotation policy', metadata: { team: 'platform' } }),
    );

    const page = await api.GET('/v1/documents/', { headers: withKey, params: { query: { limit: 10, offset: 0 } } });
    expect(page.data?.count).toBe(1);

    const answered = await api.POST('/v1/query/', {
      headers: withKey,
      body: { query: 'How often are API keys rotated?', top_k: 3 },
    });
    expect(answered.response.status).toBe(200);
    expect(answered.data?.answer).toEqual(expect.stringContaining('ninety days'));
    expect(answered.data?.sources.map((source) => source.document_id)).toEqual([uploaded.data!.id]);
    expect(answered.data?.credits_used).toBe(1);

    // Errors arrive typed as the service's error bodies.
    const refused = await api.POST('/v1/query/', { headers: withKey, body: { query: 'Rotation?', top_k: 0 } });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toEqual({
      detail: expect.stringMatching(/^top_k: /),
      fields: { top_k: [expect.any(String)] },
    });
  });
});
