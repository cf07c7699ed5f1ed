import type { HeaderObject, ReferenceObject } from '@nestjs/swagger';
import { integerSchema } from '../common/validation.js';
import { SIGN_IN_WINDOW_MS } from '../rate-limit/sign-in-throttle.js';

/** The per-address budgets' windows: a minute (sign-in, token calls), an hour (sign-up). */
const ADDRESS_WINDOWS_SECONDS = [60, 3600];
const BY_ADDRESS =
  "On the operations that work before authentication (sign-up, sign-in, refresh, verify, logout): the client address's budget for the operation (`SIGNUP_LIMIT_PER_HOUR`, `SIGNIN_LIMIT_PER_MINUTE`, `TOKEN_LIMIT_PER_MINUTE`), sent on every answer counted against it, the 429 included (not on answers given before it is counted: malformed JSON, a body over the size limit).";

const WINDOW_SECONDS = 60;
const ACCEPTED =
  'Sent on every response to a request whose credentials were accepted; not on public operations, nor on answers given before authentication (401, malformed JSON, a body over the size limit).';

/** The response headers of the contract, as reusable components (`#/components/headers/<name>`). */
export const HEADER_COMPONENTS: Record<string, HeaderObject> = {
  'RateLimit-Limit': {
    description: `Requests the caller (user or API key) may make per ${WINDOW_SECONDS}-second window, or its organization (all its keys and users: \`ORG_RATE_LIMIT_PER_MINUTE\`) when that has less left; the other RateLimit headers are of the same bucket. ${ACCEPTED}`,
    schema: integerSchema(1, Number.MAX_SAFE_INTEGER),
  },
  'RateLimit-Remaining': {
    description: `Requests left in the current window. ${ACCEPTED}`,
    schema: integerSchema(0, Number.MAX_SAFE_INTEGER),
  },
  'RateLimit-Reset': {
    description: `Whole seconds until the window frees capacity. ${ACCEPTED}`,
    schema: integerSchema(0, WINDOW_SECONDS),
  },
  'RateLimit-Policy': {
    description: `The caller's limit and window, \`<limit>;w=${WINDOW_SECONDS}\` (IETF httpapi rate-limit headers draft). ${ACCEPTED}`,
    schema: {
      type: 'string',
      maxLength: 32,
      pattern: `^[0-9]+;w=${WINDOW_SECONDS}$`,
      example: `1200;w=${WINDOW_SECONDS}`,
    },
  },
  'Address-RateLimit-Limit': {
    description: `Requests one client address may make per window. ${BY_ADDRESS}`,
    schema: integerSchema(1, Number.MAX_SAFE_INTEGER),
  },
  'Address-RateLimit-Remaining': {
    description: `Requests the address has left in the current window. ${BY_ADDRESS}`,
    schema: integerSchema(0, Number.MAX_SAFE_INTEGER),
  },
  'Address-RateLimit-Reset': {
    description: `Whole seconds until the address's window ends. ${BY_ADDRESS}`,
    schema: integerSchema(1, Math.max(...ADDRESS_WINDOWS_SECONDS)),
  },
  'Address-RateLimit-Policy': {
    description: `The address's limit and window in seconds, \`<limit>;w=<seconds>\`: \`w=60\` for sign-in and token calls, \`w=3600\` for sign-up. ${BY_ADDRESS}`,
    schema: {
      type: 'string',
      maxLength: 32,
      pattern: `^[0-9]+;w=(${ADDRESS_WINDOWS_SECONDS.join('|')})$`,
      example: '60;w=60',
    },
  },
  'Access-Control-Allow-Origin': {
    description:
      "The request's `Origin`, echoed (with `Vary: Origin`) when it is one of CORS_ORIGINS; absent otherwise. Never `*`.",
    schema: { type: 'string', format: 'uri', maxLength: 2048, example: 'https://app.example.com' },
  },
  'Retry-After': {
    description: 'Seconds until a retry can succeed (at most one rate-limit window, or the sign-in cool-off).',
    schema: integerSchema(1, SIGN_IN_WINDOW_MS / 1000),
  },
  'X-Credits-Remaining': { description: 'Credits left in the current period.', schema: integerSchema(0, 2 ** 31 - 1) },
  'X-Credits-Reset': {
    description: 'When the quota resets (the start of the next calendar month, UTC).',
    schema: { type: 'string', format: 'date-time', maxLength: 32 },
  },
  'WWW-Authenticate': {
    description: 'The scheme to authenticate with.',
    schema: { type: 'string', enum: ['Bearer realm="api"'] },
  },
  'Idempotent-Replayed': {
    description:
      "Present (`true`) when this answer is the stored answer of an earlier request with the same `Idempotency-Key`: the route did not run again and nothing was charged. `Content-Type` and the credit headers are those of the first answer; the request id and rate-limit headers are this request's own.",
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: {
    description: 'The methods the path accepts.',
    schema: { type: 'string', maxLength: 64, pattern: '^[A-Z]+(, [A-Z]+)*$', example: 'GET, PATCH' },
  },
};

export const headerRef = (name: keyof typeof HEADER_COMPONENTS): ReferenceObject => ({
  $ref: `#/components/headers/${name}`,
});

export const RATE_LIMIT_HEADERS = Object.fromEntries(
  ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'].map((name) => [
    name,
    headerRef(name),
  ]),
);
/** The same headers on the operations limited per client address, with that budget's figures. */
export const ADDRESS_RATE_LIMIT_HEADERS = Object.fromEntries(
  ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'].map((name) => [
    name,
    headerRef(`Address-${name}`),
  ]),
);
export const CORS_HEADERS = { 'Access-Control-Allow-Origin': headerRef('Access-Control-Allow-Origin') };
/** On every metered answer (queries, chat messages). */
export const CREDIT_HEADERS = {
  'X-Credits-Remaining': headerRef('X-Credits-Remaining'),
  'X-Credits-Reset': headerRef('X-Credits-Reset'),
};

/** A route's responses as its decorators record them (`ApiResponse`'s options, by status). */
export type Responses = Record<string, { $ref?: string; description?: string; headers?: Record<string, unknown> }>;

/**
 * The responses with the headers every response may carry: `Access-Control-Allow-Origin` on all, and
 * the RateLimit headers on the 2xx and 4xx answers (but 401) of operations that need credentials, or,
 * on operations limited per client address (`limitedByAddress`), the address budget's on the 2xx and
 * 4xx answers (but 413: a body over the limit is refused before it is counted). A shared response is
 * its bare reference: its component carries the headers (and `ApiResponse`'s empty description goes).
 */
export function withResponseHeaders(responses: Responses, authenticated: boolean, limitedByAddress = false): Responses {
  return Object.fromEntries<Responses[string]>(
    Object.entries(responses).map(([status, response]) => {
      if (response.$ref) return [status, { $ref: response.$ref }];
      const answered = /^[24]/.test(status);
      const limits =
        authenticated && answered && status !== '401'
          ? RATE_LIMIT_HEADERS
          : limitedByAddress && answered && status !== '413'
            ? ADDRESS_RATE_LIMIT_HEADERS
            : {};
      return [status, { ...response, headers: { ...limits, ...response.headers, ...CORS_HEADERS } }];
    }),
  );
}
