import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ERROR_COMPONENTS } from './error-responses.js';
import { FORMAT_MAX_LENGTH } from './limits.js';
import { BODY_BY_MEDIA_TYPE, type BodyByMediaType } from './api-body.js';
import { HEADER_COMPONENTS } from './response-headers.js';
import { LIVENESS_OPERATION, LIVENESS_PATH } from '../lifecycle/liveness.js';
import { serviceVersion } from '../common/version.js';
import { REQUEST_EXAMPLES } from './request-examples.js';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

const DESCRIPTION = `Answers queries over knowledge bases (public domains and each organization's private documents),
with JWT sign-in for browsers and long-lived API keys for servers.

**Credentials.** A JWT access token from \`POST /auth/jwt/create/\` as \`Authorization: Bearer <token>\`, or an API key
(\`svc_…\`) as \`Authorization: Bearer svc_…\` or \`X-API-Key: svc_…\`. Key management accepts only a JWT;
administrator operations only an administrator's JWT.

**Paths** end in \`/\` as documented; the same path without it works too.

**Errors** are JSON objects with a \`detail\` string (validation errors add \`fields\`; 500s add \`request_id\`, also sent
as the \`X-Request-Id\` header). 429 answers carry \`Retry-After\`. A path called with a method it does not document
answers 405 \`{"detail": "Method \\"PUT\\" not allowed."}\` with an \`Allow\` header; an unknown path 404 \`{"detail": "Not found."}\`.
A body field the operation does not define is a 400 naming it (\`topk: This field is not allowed.\`; the OpenAI-compatible
\`/v1/chat/completions\` accepts OpenAI's other fields). An unknown resource, or another organization's, is a 404 that
names what was asked for (\`Domain "medicine" not found.\`), the same either way.

**Rate limits.** Every response to a request whose credentials were accepted carries \`RateLimit-Limit\`,
\`RateLimit-Remaining\`, \`RateLimit-Reset\` (seconds) and \`RateLimit-Policy\` (\`<limit>;w=60\`), for the tighter of the
caller's own limit and its organization's; beyond either, 429. The operations that work before authentication (sign-up,
sign-in, refresh, verify, logout) send the same headers with the client address's budget for them (\`w=3600\` for sign-up).

**Retries.** Every authenticated \`POST\` accepts an \`Idempotency-Key\` header: a retry with the same key and request
gets the first answer again (\`Idempotent-Replayed: true\`), without running or being charged twice.

**Browsers on another origin** listed in \`CORS_ORIGINS\` get \`Access-Control-Allow-Origin\` (and preflights answered);
credentials are bearer headers, never cookies.`;

/** The features, in the order the docs page shows them. */
const TAGS: [string, string][] = [
  ['auth', 'Registration, sign-in and JWT tokens.'],
  ['api-keys', 'Long-lived `svc_` keys for servers: create, expire, rotate, revoke. JWT only.'],
  ['organizations', "The caller's organization and the public domains it may query."],
  [
    'teams',
    'Members and their roles, invitations, ownership, every key of the organization and its audit log (third edition).',
  ],
  ['query', 'Questions answered from a public domain or the private documents, with sources.'],
  ['chat', 'Sessions of questions that keep their history.'],
  [
    'openai',
    'OpenAI-compatible chat completions and models, for OpenAI client libraries (`baseURL` = `{base_url}/v1`).',
  ],
  ['collections', "The organization's collections: several private knowledge bases, each searched as its own corpus."],
  ['documents', "The organization's private knowledge base."],
  ['domains', 'Public domains (knowledge bases), their regions and documents; changes are for administrators.'],
  ['billing', 'Credit quota, usage, and (administrators) monthly credits.'],
  [
    'webhooks',
    'Events pushed to your servers, signed per Standard Webhooks: endpoints, secrets, test pings, deliveries and retries.',
  ],
  ['health', 'Liveness and readiness probes.'],
  ['metrics', 'Prometheus scrape endpoint.'],
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/**
 * An operation's id is its handler's name (`createApiKey`, `query`), so generated clients get good
 * method names; handler names are therefore unique across controllers (`complete` checks).
 */
const operationIdOf = (_controller: string, method: string): string => method;

/** Builds the OpenAPI 3 document from the controllers, completes it, and serves it. */
export function setUpOpenApi(app: INestApplication, version = serviceVersion()): OpenAPIObject {
  const document = buildOpenApiDocument(app, version);
  SwaggerModule.setup(DOCS_PATH.slice(1), app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH.slice(1),
    raw: ['json'],
    customSiteTitle: 'Knowledge Query Service API',
  });
  return document;
}

/** The document alone: needs the controllers' metadata, not a database (see export.ts). */
export function buildOpenApiDocument(app: INestApplication, version = serviceVersion()): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Knowledge Query Service')
    .setDescription(DESCRIPTION)
    .setVersion(version)
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        // RFC 8725's advice kept: one algorithm (HS256) pinned, so `alg: none` and others are refused;
        // `token_type` keeps refresh tokens out of the access slot; `exp` always checked.
        description:
          'JWT access token (30 minutes), following RFC8725: HS256 only (`alg: none` refused), typed (`token_type`), always expiring.',
      },
      'jwt',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'svc_ API key',
        description: 'API key as a bearer token: `svc_…`',
      },
      'apiKeyBearer',
    )
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key in its own header' },
      'apiKeyHeader',
    );
  for (const [name, description] of TAGS) config.addTag(name, description);
  const document = SwaggerModule.createDocument(app, config.build(), { operationIdFactory: operationIdOf });
  document.paths = withLiveness(document.paths);
  complete(document);
  return document;
}

/** The liveness probe (served by Fastify directly, see liveness.ts), first of the health paths. */
function withLiveness(paths: OpenAPIObject['paths']): OpenAPIObject['paths'] {
  const entries = Object.entries(paths);
  const at = entries.findIndex(([path]) => path.startsWith(LIVENESS_PATH));
  const liveness: [string, OpenAPIObject['paths'][string]] = [
    LIVENESS_PATH,
    { get: structuredClone(LIVENESS_OPERATION) },
  ];
  entries.splice(at === -1 ? entries.length : at, 0, liveness);
  return Object.fromEntries(entries);
}

interface Schema {
  type?: string;
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
}

/**
 * What the routes' decorators cannot write: the shared components their responses refer to, the empty
 * `security` of a public operation (@nestjs/swagger leaves an empty list out), each upload's body per
 * media type and each body's example (by schema: see narrowBody, addExample), and what is the
 * document's rather than a route's (string lengths by format, unused components, paths, server). Every
 * response of a route is declared with the route (`@ApiController`, `@Authenticated`, `@ApiErrors`).
 */
function complete(document: OpenAPIObject): void {
  const operationIds = new Set<string>();
  document.components ??= {};
  document.components.schemas ??= {};
  const schemas = document.components.schemas as Record<string, Schema>;
  Object.assign(schemas, ERROR_COMPONENTS.schemas);
  document.components.responses = { ...(document.components.responses ?? {}), ...ERROR_COMPONENTS.responses };

  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const operationId = operation.operationId ?? '';
      if (operationIds.has(operationId))
        throw new Error(`Two handlers share the operation id ${operationId}: rename one`);
      operationIds.add(operationId);
      // Every route's responses are declared with it; a controller without `@ApiController` declared none.
      if (!operation.responses['500'])
        throw new Error(`${operationId} declares no 500: declare its controller with @ApiController`);
      operation.security ??= [];
      const bodyByMediaType = BODY_BY_MEDIA_TYPE.get(operationId);
      if (bodyByMediaType) narrowBody(operation.requestBody as RequestBody | undefined, bodyByMediaType);
    }
  }
  document.components.headers = { ...HEADER_COMPONENTS };

  // A body whose fields are all optional (e.g. rotate's grace period) may be left out entirely.
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const body = item[method]?.requestBody as RequestBody | undefined;
      const name = body?.content?.['application/json']?.schema?.$ref?.split('/').pop();
      const schema = name ? schemas[name] : undefined;
      if (body && schema && !schema.required?.length) body.required = false;
      addExample(body);
    }
  }

  limitFormattedStrings(document);
  pruneUnusedComponents(document);
  document.paths = Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [asSpecPath(path), item]));
  // Relative: the host that serves this document (each deployment serves its own).
  // `x-internal: false`: a public API (OWASP API9, inventory).
  const server = {
    url: '/',
    description: 'This deployment (production, staging or local): the host serving this document.',
    'x-internal': false,
  };
  document.servers = [server];
  document.info.license = { name: 'Proprietary' };
}

/** Paths as the spec writes them, with a trailing slash; Prometheus' scrape path keeps its usual form. */
function asSpecPath(path: string): string {
  return path === '/metrics' || path.endsWith('/') ? path : `${path}/`;
}

/** A string of a known format is as long as its format allows (a UUID: 36), unless it says less. */
function limitFormattedStrings(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (
    schema.type === 'string' &&
    typeof schema.format === 'string' &&
    schema.maxLength === undefined &&
    Object.hasOwn(FORMAT_MAX_LENGTH, schema.format)
  ) {
    schema.maxLength = FORMAT_MAX_LENGTH[schema.format];
  }
  for (const value of Object.values(schema)) limitFormattedStrings(value);
}

/** Shared responses and headers nothing uses (every route declared its own 404, say) are left out. */
function pruneUnusedComponents(document: OpenAPIObject): void {
  const components = document.components ?? {};
  for (const kind of ['responses', 'headers'] as const) {
    const used = new Set(
      JSON.stringify([document.paths, components.responses]).match(new RegExp(`#/components/${kind}/[\\w-]+`, 'g')) ??
        [],
    );
    const defined = components[kind] ?? {};
    for (const name of Object.keys(defined)) if (!used.has(`#/components/${kind}/${name}`)) delete defined[name];
  }
}

interface RequestBody {
  required?: boolean;
  description?: string;
  content?: Partial<Record<string, { schema?: { $ref?: string }; encoding?: unknown; example?: unknown }>>;
}

/** Every body gets its whole example (request-examples.ts), so `/docs` offers one that works. */
function addExample(body: RequestBody | undefined): void {
  for (const media of Object.values(body?.content ?? {})) {
    const name = media?.schema?.$ref?.split('/').pop();
    if (!media || !name) continue;
    if (!Object.hasOwn(REQUEST_EXAMPLES, name))
      throw new Error(`No request example for ${name}: add one to request-examples.ts`);
    media.example = REQUEST_EXAMPLES[name];
  }
}

/** Each media type of the body gets its own class's schema (a file upload's `file` is binary). */
function narrowBody(body: RequestBody | undefined, byMediaType: BodyByMediaType): void {
  if (!body?.content) return;
  for (const [mediaType, $ref] of Object.entries(byMediaType)) {
    if (!body.content[mediaType]) continue;
    body.content[mediaType] = { schema: { $ref } };
  }
}
