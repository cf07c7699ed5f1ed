import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, type ApiResponseOptions, getSchemaPath } from '@nestjs/swagger';
import { type ErrorDialect, INTERNAL_ERROR_DETAIL } from '../http/exception.filter.js';
import { ERROR_COMPONENTS, type ErrorStatus, errorResponse } from '../openapi/error-responses.js';
import { OpenAiErrorObject } from './dto/openai-error.response.js';

/**
 * The routes OpenAI clients call: `/v1/chat/completions`, `/v1/models[/{model}]`, `/v1/vector_stores…` and
 * `/v1/files[/{id}[/content]]`, trailing slash or not.
 */
const OPENAI_ROUTES =
  /^\/v1\/(?:chat\/completions|models(?:\/[^/]*)?|vector_stores(?:\/[^?]*)?|files(?:\/[^/]*(?:\/content)?)?)\/?$/;

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
      code:
        typeof body.code === 'string'
          ? body.code
          : status === 404 && typeof body.detail === 'string' && !body.detail.startsWith('Model ')
            ? 'not_found'
            : (CODE_OF[status] ?? (serverSide ? 'server_error' : null)),
      param: paramOf(body),
    },
  };
}

export const OPENAI_ERROR_DIALECT: ErrorDialect = {
  appliesTo: (path) => OPENAI_ROUTES.test(path),
  render: withOpenAiError,
};

/**
 * The 500 every route can give, with the body it gives here. (401 and 429 stay the shared responses the
 * auth decorator declares; on these routes their bodies carry `error` too, as the descriptions say.)
 */
const ERRORS_BY_DEFAULT = {
  500: {
    description: 'Unexpected, transient failure: retry with exponential back-off.',
    bodies: { internal: { detail: INTERNAL_ERROR_DETAIL, request_id: '6f1c2a7e-3b7d-4d8e-9a51-0c2f4e8b9d10' } },
  },
};

/** A shared error schema with OpenAI's `error` added (inlined: the shared ones admit no other field). */
function withErrorObject(schema: unknown): unknown {
  const { $ref, anyOf } = schema as { $ref?: string; anyOf?: unknown[] };
  if (anyOf) return { anyOf: anyOf.map(withErrorObject) };
  const name = ($ref ?? '').split('/').pop() as keyof typeof ERROR_COMPONENTS.schemas;
  const shared = ERROR_COMPONENTS.schemas[name] as { required: string[]; properties: Record<string, unknown> };
  return {
    ...shared,
    required: [...shared.required, 'error'],
    properties: { ...shared.properties, error: { $ref: getSchemaPath(OpenAiErrorObject) } },
  };
}

interface ErrorCase {
  description: string;
  bodies: Record<string, Record<string, unknown>>;
}

/**
 * `@ApiErrors` for these routes: each status's shared body schema with OpenAI's `error` object added,
 * and examples rendered by the dialect itself (so the document shows exactly what is sent).
 */
export function ApiOpenAiErrors(cases: Partial<Record<ErrorStatus, ErrorCase>>) {
  const all: Partial<Record<ErrorStatus, ErrorCase>> = { ...ERRORS_BY_DEFAULT, ...cases };
  return applyDecorators(
    ApiExtraModels(OpenAiErrorObject),
    ...Object.entries(all).map(([code, errorCase]: [string, ErrorCase]) => {
      const status = Number(code) as ErrorStatus;
      const bodies = Object.entries(errorCase.bodies).map(([name, body]) => [name, withOpenAiError(status, body)]);
      const response = errorResponse(
        status,
        errorCase.description,
        Object.fromEntries(bodies) as Record<string, Record<string, unknown>>,
      );
      const media = response.content?.['application/json'];
      return ApiResponse({
        status,
        ...response,
        content: { 'application/json': { ...media, schema: withErrorObject(media?.schema) } },
      } as ApiResponseOptions);
    }),
  );
}
