import { startTestApp, type TestApp } from '../support/app.js';
import {
  allRefs,
  deref,
  mismatches,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  resolvePointer,
  type Schema,
} from '../support/openapi.js';

const ERROR_SCHEMAS = ['Error', 'ValidationError', 'TokenError', 'QuotaError', 'ServerError'].map(
  (name) => `#/components/schemas/${name}`,
);

describe('OpenAPI document: schemas', () => {
  let test: TestApp;
  let document: OpenApiDocument;
  const operation = (path: string, method: string): Operation => document.paths[path][method];
  /** The schema a 2xx (or any) response gives for a media type, references followed. */
  const responseSchema = (path: string, method: string, status: string, mediaType = 'application/json'): Schema =>
    deref(document, deref(document, operation(path, method).responses[status]).content![mediaType].schema!);

  beforeAll(async () => {
    test = await startTestApp();
    document = (await test.http().get('/openapi.json').expect(200)).body;
  });
  afterAll(() => test.close());

  it('is structurally valid OpenAPI 3.0', () => {
    expect(document.openapi).toMatch(/^3\.0\.\d+$/);
    expect(document.info).toEqual(expect.objectContaining({ title: expect.any(String), version: expect.any(String) }));

    // Every $ref resolves, to the kind of object its place expects.
    const unresolved = allRefs(document).filter(({ ref }) => resolvePointer(document, ref) === undefined);
    expect(unresolved).toEqual([]);
    for (const { at, ref } of allRefs(document)) {
      const kind = /\/responses\/\d{3}$/.exec(at)
        ? '#/components/responses/'
        : /\/headers\/[\w-]+$/.exec(at)
          ? '#/components/headers/'
          : '#/components/schemas/';
      expect({ at, ref: ref.startsWith(kind) }).toEqual({ at, ref: true });
    }

    const operationIds = new Set<string>();
    const tags = new Set((document.tags ?? []).map((tag) => tag.name));
    for (const { path, method, operation: op } of operationsOf(document)) {
      const at = `${method.toUpperCase()} ${path}`;
      expect({ at, path: path.startsWith('/') }).toEqual({ at, path: true });
      // Unique operation ids.
      expect({ at, duplicate: operationIds.has(op.operationId!) }).toEqual({ at, duplicate: false });
      operationIds.add(op.operationId!);
      // Path templates and path parameters agree both ways; path parameters are required.
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect({ at, params: declared.map((p) => p.name).sort() }).toEqual({ at, params: templated });
      expect({ at, required: declared.every((p) => p.required === true) }).toEqual({ at, required: true });
      for (const parameter of op.parameters ?? []) {
        expect({
          at,
          parameter: ['path', 'query', 'header', 'cookie'].includes(parameter.in) && Boolean(parameter.schema),
        }).toEqual({ at, parameter: true });
      }
      // Responses: valid status keys, each with a description (once references are followed).
      expect({ at, any: Object.keys(op.responses).length > 0 }).toEqual({ at, any: true });
      for (const [status, response] of Object.entries(op.responses)) {
        expect({ at, status: /^([1-5]\d\d|[1-5]XX|default)$/.test(status) }).toEqual({ at, status: true });
        expect({ at, status, description: typeof deref(document, response).description }).toEqual({
          at,
          status,
          description: 'string',
        });
      }
      // Security names the declared schemes; tags are declared.
      for (const requirement of op.security ?? []) {
        for (const scheme of Object.keys(requirement))
          expect({ at, scheme: scheme in document.components.securitySchemes }).toEqual({ at, scheme: true });
      }
      for (const tag of op.tags ?? []) expect({ at, tag: tags.has(tag) }).toEqual({ at, tag: true });
      for (const [mediaType, content] of Object.entries(op.requestBody?.content ?? {})) {
        expect({ at, mediaType, schema: Boolean(content.schema) }).toEqual({ at, mediaType, schema: true });
      }
    }

    // Object schemas require only properties they declare; `nullable` goes with a `type`.
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const required of schema.required ?? [])
        expect({ name, required, declared: required in (schema.properties ?? {}) }).toEqual({
          name,
          required,
          declared: true,
        });
      for (const [property, value] of Object.entries(schema.properties ?? {})) {
        if (value.nullable)
          expect({ name, property, type: Boolean(value.type || value.allOf) }).toEqual({ name, property, type: true });
      }
    }
  });

  it('gives every operation a one-line summary, a tag and a 2xx response with a schema (or 204)', () => {
    for (const { path, method, operation: op } of operationsOf(document)) {
      const at = `${method.toUpperCase()} ${path}`;
      expect({
        at,
        summary: typeof op.summary === 'string' && op.summary.length > 0 && !op.summary.includes('\n'),
      }).toEqual({ at, summary: true });
      expect({ at, tags: op.tags?.length }).toEqual({ at, tags: 1 });
      const successes = Object.keys(op.responses).filter((status) => /^2\d\d$/.test(status));
      expect({ at, successes: successes.length }).toEqual({ at, successes: 1 });
      const [status] = successes;
      const response = deref(document, op.responses[status]);
      if (status === '204') {
        expect({ at, content: response.content }).toEqual({ at, content: undefined });
        continue;
      }
      const content = Object.entries(response.content ?? {});
      expect({ at, mediaTypes: content.length > 0 }).toEqual({ at, mediaTypes: true });
      for (const [mediaType, media] of content) {
        const schema = media.schema ? deref(document, media.schema) : undefined;
        const described =
          mediaType === 'application/json' ? Boolean(schema?.properties || schema?.items) : Boolean(schema?.type);
        expect({ at, mediaType, described }).toEqual({ at, mediaType, described: true });
      }
    }
  });

  it('describes API keys: `key` in the create and rotate responses only, `rotated_from` in rotate only', () => {
    const created = responseSchema('/v1/billings/api-keys/', 'post', '201');
    expect(created.required).toEqual(expect.arrayContaining(['key_prefix', 'is_active', 'expires_at', 'created_at']));
    // An Idempotency-Key replay carries `key_withheld` instead of the full key, which is never stored.
    expect(created.properties).toHaveProperty('key');
    expect(created.properties).toHaveProperty('key_withheld');
    expect(created.required).not.toContain('key');
    expect(created.properties).not.toHaveProperty('rotated_from');

    const list = responseSchema('/v1/billings/api-keys/', 'get', '200');
    expect(list.type).toBe('array');
    const item = deref(document, list.items!);
    expect(Object.keys(item.properties!).sort()).toEqual([
      'collection_ids',
      'created_at',
      'credits_used_this_period',
      'expires_at',
      'grace_until',
      'id',
      'is_active',
      'key_prefix',
      'last_used_at',
      'metadata',
      'monthly_credit_limit',
      'name',
      'rate_limit_per_minute',
      'replaced_by',
      'scopes',
    ]);
    expect(item.properties!.expires_at).toEqual(
      expect.objectContaining({ type: 'string', format: 'date-time', nullable: true }),
    );
    expect(item.properties!.last_used_at).toEqual(expect.objectContaining({ nullable: true }));

    const rotated = responseSchema('/v1/billings/api-keys/{keyId}/rotate/', 'post', '201');
    expect(rotated.required).toEqual(expect.arrayContaining(['rotated_from']));
    expect(rotated.properties).toHaveProperty('key');
    for (const [path, method] of [
      ['/v1/billings/api-keys/{keyId}/update/', 'patch'],
      ['/v1/billings/api-keys/{keyId}/revoke/', 'post'],
    ]) {
      expect(responseSchema(path, method, '200').properties).not.toHaveProperty('key');
    }
    expect(operation('/v1/billings/api-keys/{keyId}/', 'delete').responses['204']).toBeDefined();

    // Request bodies: each update field is optional (at least one must be given; expires_at may be null);
    // rotation's body is optional.
    const update = deref(
      document,
      operation('/v1/billings/api-keys/{keyId}/update/', 'patch').requestBody!.content['application/json'].schema!,
    );
    expect(update.required).toBeUndefined();
    expect(Object.keys(update.properties!).sort()).toEqual([
      'collection_ids',
      'expires_at',
      'metadata',
      'monthly_credit_limit',
      'name',
      'rate_limit_per_minute',
      'scopes',
    ]);
    expect(update.properties!.expires_at).toEqual(
      expect.objectContaining({ type: 'string', format: 'date-time', nullable: true }),
    );
    const rotate = operation('/v1/billings/api-keys/{keyId}/rotate/', 'post').requestBody!;
    expect(rotate.required).toBe(false);
    expect(deref(document, rotate.content['application/json'].schema!).properties!.grace_period_seconds).toEqual(
      expect.objectContaining({ type: 'integer', minimum: 0, maximum: 86400 }),
    );
    // Key management: a JWT only, and the 401 says so.
    for (const { path, operation: op } of operationsOf(document).filter(({ path }) =>
      path.startsWith('/v1/billings/api-keys/'),
    )) {
      expect({ path, security: op.security }).toEqual({ path, security: [{ jwt: [] }] });
      expect({ path, unauthorized: op.responses['401'] }).toEqual({
        path,
        unauthorized: { $ref: '#/components/responses/UnauthorizedJwtOnly' },
      });
    }
  });

  it('offers both document uploads as multipart with a binary `file`, or as JSON', () => {
    for (const path of ['/v1/documents/', '/v1/domains/{slug}/documents/']) {
      const body = operation(path, 'post').requestBody!;
      expect({ path, mediaTypes: Object.keys(body.content).sort() }).toEqual({
        path,
        mediaTypes: ['application/json', 'multipart/form-data'],
      });
      const form = deref(document, body.content['multipart/form-data'].schema!);
      expect({ path, file: form.properties!.file }).toEqual({
        path,
        file: expect.objectContaining({ type: 'string', format: 'binary' }),
      });
      expect({ path, required: form.required }).toEqual({ path, required: ['file'] });
      expect(form.properties!.title).toEqual(expect.objectContaining({ type: 'string' }));
      const json = deref(document, body.content['application/json'].schema!);
      expect({ path, required: json.required }).toEqual({ path, required: ['title', 'content'] });
      expect(json.properties!.metadata).toEqual(
        expect.objectContaining({ type: 'object', nullable: true, additionalProperties: expect.anything() }),
      );
      expect(Object.keys(operation(path, 'post').responses)).toEqual(expect.arrayContaining(['201', '400', '413']));
    }
  });

  it('describes the query as JSON or an event stream, and every list with `limit` as a page', () => {
    const ok = deref(document, operation('/v1/query/', 'post').responses['200']);
    expect(Object.keys(ok.content!).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(responseSchema('/v1/query/', 'post', '200').required).toEqual([
      'answer',
      'sources',
      'domain',
      'credits_used',
      'credits_remaining',
    ]);
    expect(ok.headers).toEqual(
      expect.objectContaining({ 'X-Credits-Remaining': expect.anything(), 'X-Credits-Reset': expect.anything() }),
    );
    const query = deref(document, operation('/v1/query/', 'post').requestBody!.content['application/json'].schema!);
    expect(query.properties!.domain).toEqual(expect.objectContaining({ nullable: true }));

    let paginated = operationsOf(document).filter(({ operation: op }) =>
      op.parameters?.some((p) => p.name === 'limit' && p.in === 'query'),
    );
    // OpenAI's lists page by cursor, in OpenAI's shape (`data`, `first_id`, `last_id`, `has_more`).
    const openAiLists = ['/v1/files/', '/v1/vector_stores/', '/v1/vector_stores/{id}/files/'];
    for (const path of openAiLists)
      expect(Object.keys(responseSchema(path, 'get', '200').properties!).sort()).toEqual([
        'data',
        'first_id',
        'has_more',
        'last_id',
        'object',
      ]);
    paginated = paginated.filter(({ path }) => !openAiLists.includes(path));
    expect(paginated.map(({ path }) => path).sort()).toEqual([
      '/v1/billings/api-keys/events/',
      '/v1/billings/usage/',
      '/v1/chat/sessions/',
      '/v1/chat/sessions/{sessionId}/messages/',
      '/v1/collections/',
      '/v1/documents/',
      '/v1/domains/{slug}/documents/',
      '/v1/organizations/current/api-keys/',
      '/v1/organizations/current/events/',
      '/v1/organizations/current/invitations/',
      '/v1/organizations/current/members/',
      '/v1/webhooks/{webhookId}/deliveries/',
    ]);
    for (const { path, method } of paginated) {
      const page = responseSchema(path, method, '200');
      expect({ path, fields: Object.keys(page.properties!).sort() }).toEqual({
        path,
        fields: ['count', 'next', 'previous', 'results'],
      });
      expect(page.properties!.results.type).toBe('array');
      expect(page.properties!.next.nullable).toBe(true);
      expect(Object.keys(operation(path, method).responses)).toContain('400');
    }
  });

  it('documents errors with the shared error schemas, per route, and every example matches its schema', () => {
    const errorRefs = (schema: Schema): string[] =>
      [schema.$ref, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(errorRefs)].filter(
        Boolean,
      ) as string[];
    for (const { path, method, operation: op } of operationsOf(document)) {
      for (const [status, raw] of Object.entries(op.responses)) {
        if (Number(status) < 400 || (path === '/health/ready/' && status === '503')) continue;
        const response = deref(document, raw);
        const schema = response.content?.['application/json']?.schema;
        const refs = schema ? errorRefs(schema) : [];
        // The OpenAI-compatible routes answer the shared body plus OpenAI's `error` object.
        const openAiDialect =
          /^\/v1\/(chat\/completions|models|vector_stores|files)\//.test(path) &&
          JSON.stringify(schema ?? {}).includes('#/components/schemas/OpenAiErrorObject');
        expect({
          at: `${method} ${path} ${status}`,
          shared: openAiDialect || (refs.length > 0 && refs.every((ref) => ERROR_SCHEMAS.includes(ref))),
        }).toEqual({
          at: `${method} ${path} ${status}`,
          shared: true,
        });
      }
      if (path.includes('{'))
        expect({ path, method, codes: Object.keys(op.responses) }).toEqual({
          path,
          method,
          codes: expect.arrayContaining(['404']),
        });
    }
    const codesOf = (path: string, method: string) => Object.keys(operation(path, method).responses);
    expect(codesOf('/v1/chat/sessions/{sessionId}/messages/', 'post')).toEqual(
      expect.arrayContaining(['402', '403', '404']),
    );
    expect(codesOf('/auth/jwt/create/', 'post')).toEqual(expect.arrayContaining(['401', '429']));
    expect(codesOf('/auth/jwt/refresh/', 'post')).toContain('401');
    expect(codesOf('/health/ready/', 'get')).toEqual(['200', '500', '503']);
    expect(codesOf('/health/', 'get')).toEqual(['200', '500']);
    // The 401 shows its three forms.
    const unauthorized = document.components.responses.Unauthorized.content!['application/json'].examples!;
    expect(Object.values(unauthorized).map((example) => (example.value as { detail: string }).detail)).toEqual([
      'Authentication credentials were not provided.',
      'Given token not valid for any token type',
      'Invalid or expired API key. Check that the key is active and has not expired.',
    ]);

    // Examples: of media types (responses and request bodies), and of schema properties.
    const checked: string[] = [];
    const check = (at: string, schema: Schema | undefined, value: unknown) => {
      checked.push(at);
      expect({ at, problems: mismatches(document, schema, value) }).toEqual({ at, problems: [] });
    };
    const mediaTypes = [
      ...operationsOf(document).flatMap(({ path, method, operation: op }) => [
        ...Object.entries(op.responses).flatMap(([status, response]) =>
          Object.entries(deref(document, response).content ?? {}).map(([type, media]) => ({
            at: `${method} ${path} ${status} ${type}`,
            type,
            media,
          })),
        ),
        ...Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => ({
          at: `${method} ${path} body ${type}`,
          type,
          media,
        })),
      ]),
    ];
    for (const { at, type, media } of mediaTypes) {
      if (type !== 'application/json') continue;
      if (media.example !== undefined) check(at, media.schema, media.example);
      for (const [name, example] of Object.entries(media.examples ?? {}))
        check(`${at} ${name}`, media.schema, example.value);
    }
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const [property, value] of Object.entries(schema.properties ?? {})) {
        if (value.example !== undefined) check(`${name}.${property}`, value, value.example);
      }
    }
    expect(checked.length).toBeGreaterThan(50);
  });

  it('notes administrators-only and JWT-only operations, and leaves public ones open', () => {
    for (const { path, method, operation: op } of operationsOf(document)) {
      const at = `${method} ${path}`;
      if (op.responses['403'] && JSON.stringify(op.responses['403']).includes('components/responses/Forbidden"')) {
        expect({ at, description: op.description ?? '' }).toEqual({
          at,
          description: expect.stringContaining('Administrators only'),
        });
        expect({ at, security: op.security }).toEqual({ at, security: [{ jwt: [] }] });
      }
    }
    const admin = [
      'post /v1/regions/',
      'patch /v1/domains/{slug}/',
      'get /v1/domains/{slug}/documents/',
      'patch /v1/billings/organizations/{organizationId}/subscription/',
    ];
    for (const entry of admin) {
      const [method, path] = entry.split(' ');
      expect({ entry, description: operation(path, method).description }).toEqual({
        entry,
        description: expect.stringContaining('Administrators only'),
      });
    }
    for (const path of [
      '/health/',
      '/health/ready/',
      '/metrics',
      '/auth/jwt/create/',
      '/auth/jwt/refresh/',
      '/auth/jwt/verify/',
      '/auth/jwt/logout/',
    ]) {
      const [method] = Object.keys(document.paths[path]);
      expect({ path, security: operation(path, method).security }).toEqual({ path, security: [] });
    }
    expect(operation('/auth/users/', 'post').security).toEqual([]);
    expect(operation('/v1/query/', 'post').security).toEqual([{ jwt: [] }, { apiKeyBearer: [] }, { apiKeyHeader: [] }]);
  });
});
