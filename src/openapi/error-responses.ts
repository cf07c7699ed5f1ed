import type { AuthRequirement } from '../common/auth.decorators.js';

const detail = { type: 'string', description: 'Human-readable message; present in every error.' };
const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: string, example?: Record<string, unknown>) => ({
  'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, ...(example ? { example } : {}) },
});

/** The error bodies of the contract, as reusable components. */
export const ERROR_COMPONENTS = {
  schemas: {
    Error: { type: 'object', required: ['detail'], properties: { detail } },
    ValidationError: {
      type: 'object',
      required: ['detail', 'fields'],
      properties: { detail, fields: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
    },
    TokenError: {
      type: 'object',
      required: ['detail', 'code'],
      properties: {
        detail,
        code: { type: 'string', enum: ['token_not_valid'] },
        messages: {
          type: 'array',
          items: { type: 'object', properties: { token_class: { type: 'string' }, token_type: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
    QuotaError: {
      type: 'object',
      required: ['detail', 'code'],
      properties: {
        detail,
        code: { type: 'string', enum: ['quota_exhausted'] },
        credits_total: { type: 'integer' },
        credits_used: { type: 'integer' },
        resets_at: { type: 'string', format: 'date-time' },
      },
    },
    ServerError: {
      type: 'object',
      required: ['detail', 'request_id'],
      properties: { detail, request_id: { type: 'string', description: 'Also in the X-Request-Id header and the log.' } },
    },
  },
  responses: {
    BadRequest: { description: 'A field is missing or invalid, or the JSON is malformed.', content: json('ValidationError', { detail: 'name: This field is required.', fields: { name: ['This field is required.'] } }) },
    Unauthorized: {
      description: 'Credentials missing, invalid or expired (the JWT shape carries `code` and `messages`).',
      headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
      content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/TokenError' }] } } },
    },
    PaymentRequired: { description: 'The monthly credit quota is exhausted.', content: json('QuotaError') },
    Forbidden: { description: 'Not allowed: administrators only, or a domain outside the organization\'s allowed_domains.', content: json('Error', { detail: 'You do not have permission to perform this action.' }) },
    NotFound: { description: 'No such resource, or it belongs to someone else.', content: json('Error', { detail: 'Not found.' }) },
    PayloadTooLarge: { description: 'Body over the size limit.', content: json('Error') },
    TooManyRequests: {
      description: 'Rate limited (per key or user per minute, or repeated failed sign-ins).',
      headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until a retry can succeed.' } },
      content: json('Error', { detail: 'Request was throttled. Expected available in 42 seconds.' }),
    },
    InternalError: { description: 'Unexpected, transient failure: retry with exponential back-off.', content: json('ServerError') },
    ServiceUnavailable: { description: 'The database is unreachable or the instance is shutting down: retry with back-off.', content: json('Error') },
  },
};

const METERED = [/^\/v1\/query$/, /^\/v1\/chat\/sessions\/\{[^}]+\}\/messages$/];

/** Which of the error responses an operation can give, from its path, method and requirement. */
export function errorResponsesFor(operation: { path: string; method: string; requirement: AuthRequirement; hasBody: boolean }) {
  const { path, requirement, hasBody } = operation;
  const responses: Record<string, unknown> = { '500': ref('InternalError') };
  const liveness = path === '/health' || path === '/metrics';
  if (!liveness) responses['503'] = ref('ServiceUnavailable');
  if (hasBody) Object.assign(responses, { '400': ref('BadRequest'), '413': ref('PayloadTooLarge') });
  if (!requirement.public) Object.assign(responses, { '401': ref('Unauthorized'), '429': ref('TooManyRequests') });
  if (path === '/auth/jwt/create') Object.assign(responses, { '401': ref('Unauthorized'), '429': ref('TooManyRequests') });
  if (requirement.adminOnly) responses['403'] = ref('Forbidden');
  if (path.includes('{')) responses['404'] = ref('NotFound');
  if (METERED.some((pattern) => pattern.test(path))) Object.assign(responses, { '402': ref('PaymentRequired'), '403': ref('Forbidden'), '404': ref('NotFound') });
  return responses;
}
