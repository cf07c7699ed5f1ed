import type { ErrorDialect } from '../http/exception.filter.js';

/** The routes OpenAI clients call: `/v1/chat/completions` and `/v1/models[/{model}]`, trailing slash or not. */
const OPENAI_ROUTES = /^\/v1\/(?:chat\/completions|models(?:\/[^/]*)?)\/?$/;

/** OpenAI's error `type` for each status this service gives; the client reports it with the message. */
const TYPE_OF: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** The `code` when our body has none of its own (`token_not_valid`, `quota_exhausted` are kept). */
const CODE_OF: Record<number, string> = {
  400: 'invalid_value',
  401: 'invalid_api_key',
  403: 'model_not_allowed',
  404: 'model_not_found',
  405: 'method_not_allowed',
  413: 'request_too_large',
  429: 'rate_limit_exceeded',
};

/** The first field a 400 names (`messages`, `messages.0.content`), as OpenAI's `param`. */
function paramOf(body: Record<string, unknown>): string | null {
  const fields = body.fields as Record<string, unknown> | undefined;
  return fields ? (Object.keys(fields)[0] ?? null) : null;
}

/** Our body with OpenAI's `error: {message, type, code, param}` added, so OpenAI clients raise their own error types. */
export function withOpenAiError(status: number, body: Record<string, unknown>): Record<string, unknown> {
  const serverSide = status >= 500;
  return {
    ...body,
    error: {
      message: body.detail,
      type: TYPE_OF[status] ?? (serverSide ? 'server_error' : 'invalid_request_error'),
      code: typeof body.code === 'string' ? body.code : (CODE_OF[status] ?? (serverSide ? 'server_error' : null)),
      param: paramOf(body),
    },
  };
}

export const OPENAI_ERROR_DIALECT: ErrorDialect = {
  appliesTo: (path) => OPENAI_ROUTES.test(path),
  render: withOpenAiError,
};
