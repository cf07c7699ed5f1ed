import { startTestApp, type TestApp } from '../support/app.js';
import { registeredRoutes } from '../support/ops.js';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, Record<string, string>>;
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
  };
}

/** A registered route as the document writes it: `{param}`, and the spec's trailing slash (but /metrics). */
const asDocumentPath = (path: string) => {
  const templated = path.replace(/:(\w+)/g, '{$1}');
  return templated === '/metrics' ? templated : `${templated}/`;
};

/** Served by Swagger itself, not part of the API; and MCP, a JSON-RPC protocol described in docs/API.md. */
const NOT_API = [/^\/docs/, /^\/openapi\.json$/, /^\/app(\/|$)/, /^\/mcp$/];

describe('OpenAPI document', () => {
  let test: TestApp;
  let document: Document;

  beforeAll(async () => {
    test = await startTestApp();
    document = (await test.http().get('/openapi.json').expect(200).expect('Content-Type', /json/)).body;
  });
  afterAll(() => test.close());

  it('lists every route the app registers, with its method', () => {
    const missing = registeredRoutes(test.app)
      .filter((route) => !NOT_API.some((pattern) => pattern.test(route.path)))
      .filter((route) => !document.paths[asDocumentPath(route.path)]?.[route.method.toLowerCase()])
      .map((route) => `${route.method} ${route.path}`);
    expect(document.openapi).toMatch(/^3\./);
    expect(missing).toEqual([]);
  });

  it('declares the three credentials and applies them per route', () => {
    expect(document.components.securitySchemes).toEqual({
      jwt: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      apiKeyBearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      apiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(document.paths['/health/'].get.security).toEqual([]);
    expect(document.paths['/v1/billings/api-keys/'].post.security).toEqual([{ jwt: [] }]);
    expect(document.paths['/auth/users/me/'].get.security).toEqual([
      { jwt: [] },
      { apiKeyBearer: [] },
      { apiKeyHeader: [] },
    ]);
  });

  it('documents the error bodies on every operation', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const codes = Object.keys(operation.responses);
        expect({ at: `${method} ${path}`, has500: codes.includes('500') }).toEqual({
          at: `${method} ${path}`,
          has500: true,
        });
        if (operation.requestBody)
          expect({ at: `${method} ${path}`, codes }).toEqual({
            at: `${method} ${path}`,
            codes: expect.arrayContaining(['400', '413']),
          });
        if (operation.security && operation.security.length > 0) {
          expect({ at: `${method} ${path}`, codes }).toEqual({
            at: `${method} ${path}`,
            codes: expect.arrayContaining(['401', '429']),
          });
        }
      }
    }
    expect(Object.keys(document.paths['/v1/query/'].post.responses)).toEqual(
      expect.arrayContaining(['400', '401', '402', '403', '404', '429', '500']),
    );
    expect(document.components.schemas.ServerError.required).toEqual(['detail', 'request_id']);
  });

  it('describes request bodies from the DTOs, with their required fields', () => {
    const schemaOf = (path: string, method: string) => {
      const ref = document.paths[path][method].requestBody!.content['application/json'].schema.$ref!;
      return document.components.schemas[ref.split('/').pop()!];
    };
    const createKey = schemaOf('/v1/billings/api-keys/', 'post');
    expect(createKey.required).toEqual(['name']);
    expect(createKey.properties!.name).toEqual({ type: 'string', maxLength: 100 });
    expect(Object.keys(createKey.properties!).sort()).toEqual([
      'collection_ids',
      'metadata',
      'monthly_credit_limit',
      'name',
      'rate_limit_per_minute',
      'scopes',
    ]);
    expect(schemaOf('/auth/jwt/create/', 'post').required).toEqual(['email', 'password']);
    expect(Object.keys(schemaOf('/v1/query/', 'post').properties ?? {})).toEqual(
      expect.arrayContaining(['query', 'domain', 'top_k', 'stream']),
    );
    // Rotation's only field is optional: the body may be left out.
    expect(
      (document.paths['/v1/billings/api-keys/{keyId}/rotate/'].post.requestBody as { required?: boolean }).required,
    ).toBe(false);
  });

  it('writes paths as the spec does, with a trailing slash', () => {
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/health/',
        '/auth/jwt/create/',
        '/v1/billings/api-keys/',
        '/v1/billings/api-keys/{keyId}/rotate/',
        '/v1/query/',
      ]),
    );
    expect(paths.filter((path) => !path.endsWith('/'))).toEqual(['/metrics']);
  });

  it('names operations so that generated clients get good method names', () => {
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => (operation as { operationId?: string }).operationId),
    );
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    const idOf = (path: string, method: string) =>
      (document.paths[path][method] as { operationId?: string }).operationId;
    expect(idOf('/v1/billings/api-keys/', 'post')).toBe('createApiKey');
    expect(idOf('/v1/billings/api-keys/{keyId}/rotate/', 'post')).toBe('rotateApiKey');
    expect(idOf('/v1/query/', 'post')).toBe('query');
    expect(idOf('/v1/documents/', 'get')).toBe('listDocuments');
    expect(idOf('/health/', 'get')).toBe('getHealth');
  });

  it('states the limits the validators enforce, and a format for every integer', () => {
    const schemas = document.components.schemas as Record<
      string,
      { properties: Record<string, Record<string, unknown>> }
    >;
    expect(schemas.QueryDto.properties.query).toEqual(expect.objectContaining({ maxLength: 4000 }));
    expect(schemas.QueryDto.properties.top_k).toEqual(
      expect.objectContaining({ type: 'integer', format: 'int32', minimum: 1, maximum: 100 }),
    );
    expect(schemas.QueryResponse.properties.sources).toEqual(expect.objectContaining({ maxItems: 100 }));
    expect(schemas.CreateRegionDto.properties.slug).toEqual(expect.objectContaining({ maxLength: 50 }));
    expect(schemas.UpdateOrganizationDto.properties.allowed_domains).toEqual(
      expect.objectContaining({ maxItems: 500 }),
    );
    const integers = JSON.stringify(document).match(/"type":"integer"[^}]*/g) ?? [];
    expect(integers.filter((schema) => !/"format":"int(32|64)"/.test(schema))).toEqual([]);
  });

  it('documents the RateLimit headers on authenticated answers and Access-Control-Allow-Origin on all', () => {
    const headersOf = (path: string, method: string, status: string) =>
      Object.keys(
        (document.paths[path][method].responses[status] as { headers?: Record<string, unknown> }).headers ?? {},
      );
    expect(headersOf('/v1/query/', 'post', '200')).toEqual(
      expect.arrayContaining([
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'RateLimit-Policy',
        'Access-Control-Allow-Origin',
        'X-Credits-Remaining',
      ]),
    );
    expect(headersOf('/health/', 'get', '200')).toEqual(['Access-Control-Allow-Origin']);
    const tooMany = (
      document as unknown as { components: { responses: Record<string, { headers: Record<string, unknown> }> } }
    ).components.responses.TooManyRequests;
    expect(Object.keys(tooMany.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'Access-Control-Allow-Origin']),
    );
  });

  it('is browsable at /docs', async () => {
    const page = await test.http().get('/docs').redirects(1).expect(200);
    expect(page.text).toContain('swagger-ui');
  });
});
