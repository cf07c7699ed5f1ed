import type { HeadersObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import {
  AccessTokenInvalidError,
  ApiKeyInvalidError,
  ApiKeyNotAcceptedError,
  BadRequestError,
  DomainNotAllowedError,
  FileTooLargeError,
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotencyStoreFullError,
  IdempotentAnswerNotKeptError,
  InvalidCredentialsError,
  KeyCreditLimitExhaustedError,
  MethodNotAllowedError,
  MissingScopeError,
  NotAuthenticatedError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  QuotaExhaustedError,
  SearchesBusyError,
  ServiceUnavailableError,
  ThrottledError,
  TokenInvalidError,
  ValidationFailedError,
} from '../common/errors.js';
import { INTERNAL_ERROR_DETAIL } from '../http/exception.filter.js';
import { DATABASE_UNAVAILABLE_DETAIL } from '../lifecycle/database-faults.js';
import { REQUEST_ID_MAX } from '../observability/request-id.js';
import { DETAIL_MAX } from '../common/errors.js';
import { CREDITS } from './limits.js';
import { CORS_HEADERS, headerRef, RATE_LIMIT_HEADERS } from './response-headers.js';

const detail = {
  type: 'string',
  maxLength: DETAIL_MAX,
  description: 'Human-readable message; present in every error.',
};
const schema = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 422 | 429 | 500 | 503;
type Example = Record<string, unknown>;

/**
 * Examples are the bodies the error classes themselves produce, so the document quotes the service's
 * messages verbatim and cannot drift from them.
 */
export const ERROR_EXAMPLES = {
  validation: new ValidationFailedError({ name: ['This field is required.'] }).body(),
  malformedJson: new BadRequestError('Malformed JSON in the request body.').body(),
  notAuthenticated: new NotAuthenticatedError().body(),
  accessTokenInvalid: new AccessTokenInvalidError().body(),
  apiKeyInvalid: new ApiKeyInvalidError().body(),
  apiKeyNotAccepted: new ApiKeyNotAcceptedError().body(),
  invalidCredentials: new InvalidCredentialsError().body(),
  tokenInvalid: new TokenInvalidError().body(),
  quota: new QuotaExhaustedError({ creditsTotal: 1000, creditsUsed: 1000, resetsAt: '2026-12-01T00:00:00Z' }).body(),
  keyCreditLimit: new KeyCreditLimitExhaustedError({
    creditsTotal: 30,
    creditsUsed: 30,
    resetsAt: '2026-12-01T00:00:00Z',
  }).body(),
  permissionDenied: new PermissionDeniedError().body(),
  missingScope: new MissingScopeError('documents:write').body(),
  domainNotAllowed: new DomainNotAllowedError().body(),
  notFound: NotFoundError.named('Document', '3f2b8c1e-9a4d-4e7b-8c2d-5a6f7e8d9c0b').body(),
  methodNotAllowed: new MethodNotAllowedError('PUT', ['GET', 'PATCH']).body(),
  payloadTooLarge: new PayloadTooLargeError(1_048_576).body(),
  fileTooLarge: new FileTooLargeError(10_485_760).body(),
  throttled: new ThrottledError(42).body(),
  searchesBusy: new SearchesBusyError(5).body(),
  internal: { detail: INTERNAL_ERROR_DETAIL, request_id: '6f1c2a7e-3b7d-4d8e-9a51-0c2f4e8b9d10' },
  unavailable: new ServiceUnavailableError(DATABASE_UNAVAILABLE_DETAIL).body(),
  idempotencyInProgress: new IdempotencyKeyInProgressError().body(),
  idempotencyKeyReused: new IdempotencyKeyReusedError().body(),
  idempotencyStoreFull: new IdempotencyStoreFullError(64).body(),
  idempotentAnswerNotKept: new IdempotentAnswerNotKeptError('too_large', 256).body(),
} satisfies Record<string, Example>;

const SCHEMA_OF: Record<ErrorStatus, SchemaObject | ReferenceObject> = {
  // A validation error carries `fields`; a malformed body or a refused state change only `detail`.
  400: { anyOf: [schema('ValidationError'), schema('Error')] },
  // The JWT form adds `code` (and `messages` for access tokens) to `detail`.
  401: { anyOf: [schema('TokenError'), schema('Error')] },
  402: schema('QuotaError'),
  403: schema('Error'),
  404: schema('Error'),
  405: schema('Error'),
  409: schema('Error'),
  410: schema('Error'),
  413: schema('Error'),
  422: schema('Error'),
  429: schema('Error'),
  500: schema('ServerError'),
  503: schema('Error'),
};

const HEADERS_OF: Partial<Record<ErrorStatus, HeadersObject>> = {
  401: { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
  402: { 'X-Credits-Remaining': headerRef('X-Credits-Remaining'), 'X-Credits-Reset': headerRef('X-Credits-Reset') },
  405: { Allow: headerRef('Allow') },
  429: { 'Retry-After': headerRef('Retry-After') },
};

/** An error response object: the status's shared body schema, its headers, and named examples. */
export function errorResponse(
  status: ErrorStatus,
  description: string,
  examples: Record<string, Example> = {},
): ResponseObject {
  const named = Object.entries(examples);
  return {
    description,
    ...(HEADERS_OF[status] ? { headers: HEADERS_OF[status] } : {}),
    content: {
      'application/json': {
        schema: SCHEMA_OF[status],
        ...(named.length > 0 ? { examples: Object.fromEntries(named.map(([name, value]) => [name, { value }])) } : {}),
      },
    },
  };
}

/** The error bodies of the contract, as reusable components. */
export const ERROR_COMPONENTS = {
  schemas: {
    Error: { type: 'object', required: ['detail'], properties: { detail } },
    ValidationError: {
      type: 'object',
      required: ['detail', 'fields'],
      properties: {
        detail: { ...detail, description: 'Names the first bad field, e.g. `query: This field is required.`' },
        fields: {
          type: 'object',
          description: 'Every bad field with its messages.',
          // One entry per field of the body (a DTO has a handful), with its first problem.
          maxProperties: 100,
          additionalProperties: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: DETAIL_MAX } },
        },
      },
    },
    TokenError: {
      type: 'object',
      required: ['detail', 'code'],
      properties: {
        detail,
        code: { type: 'string', enum: ['token_not_valid'] },
        messages: {
          type: 'array',
          maxItems: 1,
          description: 'Present when an access token was refused.',
          items: {
            type: 'object',
            properties: {
              token_class: { type: 'string', enum: ['AccessToken'] },
              token_type: { type: 'string', enum: ['access'] },
              message: { type: 'string', maxLength: DETAIL_MAX },
            },
          },
        },
      },
    },
    QuotaError: {
      type: 'object',
      required: ['detail', 'code', 'credits_total', 'credits_used', 'resets_at'],
      properties: {
        detail,
        code: {
          type: 'string',
          enum: ['quota_exhausted', 'key_credit_limit_exhausted'],
          description:
            "`quota_exhausted`: the organization's quota; `key_credit_limit_exhausted`: the key's own `monthly_credit_limit` (the figures are then the key's).",
        },
        credits_total: CREDITS,
        credits_used: CREDITS,
        resets_at: { type: 'string', format: 'date-time' },
      },
    },
    ServerError: {
      type: 'object',
      required: ['detail', 'request_id'],
      properties: {
        detail,
        request_id: {
          type: 'string',
          maxLength: REQUEST_ID_MAX,
          description: 'Also in the X-Request-Id header and the log.',
        },
      },
    },
  },
  responses: withSharedHeaders({
    BadRequest: errorResponse(400, 'A field is missing or invalid, or the JSON is malformed.', {
      validation: ERROR_EXAMPLES.validation,
      malformedJson: ERROR_EXAMPLES.malformedJson,
    }),
    Unauthorized: errorResponse(
      401,
      'Credentials missing, invalid or expired (the JWT form carries `code` and `messages`).',
      {
        notProvided: ERROR_EXAMPLES.notAuthenticated,
        invalidJwt: ERROR_EXAMPLES.accessTokenInvalid,
        invalidApiKey: ERROR_EXAMPLES.apiKeyInvalid,
      },
    ),
    UnauthorizedJwtOnly: errorResponse(
      401,
      'Credentials missing, invalid or expired, or an API key: key management accepts only a JWT access token.',
      {
        notProvided: ERROR_EXAMPLES.notAuthenticated,
        invalidJwt: ERROR_EXAMPLES.accessTokenInvalid,
        apiKeyNotAccepted: ERROR_EXAMPLES.apiKeyNotAccepted,
      },
    ),
    PaymentRequired: errorResponse(
      402,
      "The monthly credit quota, or the calling key's monthly credit limit, is exhausted.",
      {
        quota: ERROR_EXAMPLES.quota,
        keyCreditLimit: ERROR_EXAMPLES.keyCreditLimit,
      },
    ),
    Forbidden: errorResponse(403, 'Administrators only: another user, or any API key, is refused.', {
      permission: ERROR_EXAMPLES.permissionDenied,
    }),
    ForbiddenRole: errorResponse(
      403,
      "The caller's role in the organization is below the one this route needs (`x-required-role`; an API key acts with its creator's role).",
      { permission: ERROR_EXAMPLES.permissionDenied },
    ),
    MissingScope: errorResponse(403, 'The API key was not given the scope this route needs.', {
      missingScope: ERROR_EXAMPLES.missingScope,
    }),
    NotFound: errorResponse(
      404,
      'No such resource, or it belongs to someone else (the same answer): `detail` names its kind and the id or slug sent.',
      { notFound: ERROR_EXAMPLES.notFound },
    ),
    MethodNotAllowed: errorResponse(
      405,
      'The path exists but not with this method (any path, any method not documented for it).',
      {
        methodNotAllowed: ERROR_EXAMPLES.methodNotAllowed,
      },
    ),
    IdempotencyInProgress: errorResponse(
      409,
      'The first request with this `Idempotency-Key` is still running: retry after it has answered.',
      { idempotencyInProgress: ERROR_EXAMPLES.idempotencyInProgress },
    ),
    IdempotencyKeyReused: errorResponse(
      422,
      'This `Idempotency-Key` was already used with another method, path or body.',
      { idempotencyKeyReused: ERROR_EXAMPLES.idempotencyKeyReused },
    ),
    IdempotentAnswerNotKept: errorResponse(
      410,
      "The first request with this `Idempotency-Key` ran and was answered, but its answer was too large to keep (`IDEMPOTENCY_MAX_ANSWER_KB`) or the organization's store was full: it is not run again.",
      { idempotentAnswerNotKept: ERROR_EXAMPLES.idempotentAnswerNotKept },
    ),
    PayloadTooLarge: errorResponse(413, 'Body over the size limit.', {
      payloadTooLarge: ERROR_EXAMPLES.payloadTooLarge,
    }),
    TooManyRequests: errorResponse(
      429,
      "Rate limited (per key or user per minute); or, on a POST with a new `Idempotency-Key`, the organization's idempotency store is full (`IDEMPOTENCY_ORG_BUDGET_MB`): the request was not run; or, on an operation that searches (search, query, chat message, chat completion), the organization already has as many searches running and waiting on the instance as it may (`SEARCHES_PER_ORGANIZATION` at once, `SEARCH_QUEUE_PER_ORGANIZATION` waiting): nothing was run or charged, retry after `Retry-After` (1 second).",
      {
        throttled: ERROR_EXAMPLES.throttled,
        searchesBusy: ERROR_EXAMPLES.searchesBusy,
        idempotencyStoreFull: ERROR_EXAMPLES.idempotencyStoreFull,
      },
    ),
    InternalError: errorResponse(500, 'Unexpected, transient failure: retry with exponential back-off.', {
      internal: ERROR_EXAMPLES.internal,
    }),
    ServiceUnavailable: errorResponse(
      503,
      'The database is unreachable or the instance is shutting down: retry with back-off.',
      {
        unavailable: ERROR_EXAMPLES.unavailable,
      },
    ),
  }),
};

/**
 * Every shared response may carry `Access-Control-Allow-Origin`; the 4xx answers that come after
 * authentication (all but 401) carry the caller's RateLimit headers too.
 */
function withSharedHeaders(responses: Record<string, ResponseObject>): Record<string, ResponseObject> {
  return Object.fromEntries(
    Object.entries(responses).map(([name, response]) => {
      const limited =
        /^(BadRequest|PaymentRequired|Forbidden|ForbiddenRole|MissingScope|NotFound|MethodNotAllowed|IdempotencyInProgress|IdempotencyKeyReused|IdempotentAnswerNotKept|PayloadTooLarge|TooManyRequests)$/.test(
          name,
        );
      return [
        name,
        { ...response, headers: { ...(limited ? RATE_LIMIT_HEADERS : {}), ...response.headers, ...CORS_HEADERS } },
      ];
    }),
  );
}

/**
 * The error responses a route's declaration implies (see `@ApiController`): 500 and 503 anywhere (the
 * probes below openapi/, the only routes without a database, declare theirs), 400/413 wherever a body is read, 403 wherever an API key needs a scope
 * (`x-required-scope`), 409/410/422 wherever an `Idempotency-Key` is accepted. The credential errors
 * (401/403/429) come with `@Authenticated`; what only some routes give (402, a 404 naming the resource,
 * a domain's 403, a sign-in's 401...) is declared on the route with `@ApiErrors` and takes precedence
 * (its 403 then lists the missing scope too).
 */
export function errorResponsesFor(route: {
  hasBody: boolean;
  scoped: boolean;
  idempotent: boolean;
}): Record<string, { $ref: string }> {
  const responses: Record<string, { $ref: string }> = {
    '500': ref('InternalError'),
    '503': ref('ServiceUnavailable'),
  };
  if (route.hasBody) Object.assign(responses, { '400': ref('BadRequest'), '413': ref('PayloadTooLarge') });
  if (route.scoped) responses['403'] = ref('MissingScope');
  if (route.idempotent)
    Object.assign(responses, {
      '409': ref('IdempotencyInProgress'),
      '410': ref('IdempotentAnswerNotKept'),
      '422': ref('IdempotencyKeyReused'),
    });
  return responses;
}
