import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { schemaOfDto } from './dto-schemas.js';
import { ERROR_COMPONENTS, errorResponsesFor } from './error-responses.js';
import { handlerInfo } from './route-requirements.js';

export const OPENAPI_JSON_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

const DESCRIPTION = `Answers queries over knowledge bases (public domains and each organization's private documents),
with JWT sign-in for browsers and long-lived API keys for servers.

**Credentials.** A JWT access token from \`POST /auth/jwt/create/\` as \`Authorization: Bearer <token>\`, or an API key
(\`svc_…\`) as \`Authorization: Bearer svc_…\` or \`X-API-Key: svc_…\`. Key management accepts only a JWT;
administrator operations only an administrator's JWT.

**Errors** are JSON objects with a \`detail\` string (validation errors add \`fields\`; 500s add \`request_id\`, also sent
as the \`X-Request-Id\` header). 429 answers carry \`Retry-After\`.`;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/** Builds the OpenAPI 3 document from the controllers, completes it, and serves it. */
export function setUpOpenApi(app: INestApplication, version = '0.1.0'): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Knowledge Query Service')
    .setDescription(DESCRIPTION)
    .setVersion(version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'JWT access token (30 minutes)' }, 'jwt')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'svc_ API key', description: 'API key as a bearer token: `svc_…`' }, 'apiKeyBearer')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key in its own header' }, 'apiKeyHeader')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  complete(document, app);
  SwaggerModule.setup(DOCS_PATH.slice(1), app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH.slice(1),
    raw: ['json'],
    customSiteTitle: 'Knowledge Query Service API',
  });
  return document;
}

/** Security, error responses, tags and request schemas that decorators alone would not give. */
function complete(document: OpenAPIObject, app: INestApplication): void {
  const handlers = handlerInfo(app);
  document.components ??= {};
  document.components.schemas ??= {};
  Object.assign(document.components.schemas, ERROR_COMPONENTS.schemas);
  document.components.responses = { ...(document.components.responses ?? {}), ...ERROR_COMPONENTS.responses };

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const info = handlers.get(operation.operationId ?? '');
      const requirement = info?.requirement ?? {};
      if (requirement.public) operation.security = [];
      else if (requirement.jwtOnly || requirement.adminOnly) operation.security = [{ jwt: [] }];
      else operation.security = [{ jwt: [] }, { apiKeyBearer: [] }, { apiKeyHeader: [] }];
      if (!operation.tags || operation.tags.length === 0) operation.tags = [tagOf(path)];
      Object.assign(operation.responses, {
        ...errorResponsesFor({ path, method, requirement, hasBody: Boolean(operation.requestBody) }),
        ...operation.responses,
      });
    }
  }

  for (const type of [...handlers.values()].flatMap((info) => info.parameterTypes)) {
    if (typeof type !== 'function' || !type.name) continue;
    const existing = document.components.schemas[type.name] as { properties?: Record<string, unknown> } | undefined;
    if (!existing || Object.keys(existing.properties ?? {}).length > 0) continue;
    const schema = schemaOfDto(type as new () => object);
    if (schema) document.components.schemas[type.name] = schema;
  }

  // A body whose fields are all optional (e.g. rotate's grace period) may be left out entirely.
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const body = item[method]?.requestBody as { required?: boolean; content?: Record<string, { schema?: { $ref?: string } }> } | undefined;
      const name = body?.content?.['application/json']?.schema?.$ref?.split('/').pop();
      const schema = name ? (document.components.schemas[name] as { required?: string[] }) : undefined;
      if (body && schema && !schema.required?.length) body.required = false;
    }
  }
}

function tagOf(path: string): string {
  const segments = path.split('/').filter((segment) => segment && !segment.startsWith('{') && segment !== 'v1');
  if (segments[0] === 'billings' && segments[1] === 'api-keys') return 'api-keys';
  return segments[0] ?? 'service';
}
