import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ERROR_EXAMPLES, type ErrorStatus, errorResponse } from './error-responses.js';

type ExampleName = keyof typeof ERROR_EXAMPLES;

/**
 * When this route gives the status, and the service's real bodies that illustrate it: shared ones by
 * name, or bodies of this route's own (`new SomeError().body()`).
 */
export type ErrorCase =
  string | { description: string; examples?: readonly ExampleName[]; bodies?: Record<string, Record<string, unknown>> };

/**
 * The error answers particular to one route (or, on a class, to every route of a controller), with
 * the shared body schemas and a description of when this route gives them. They override the
 * ones the route's declaration implies, which `@ApiController` adds (see `errorResponsesFor`).
 *
 *     @ApiErrors({ 404: 'No such key, or another user\'s.' })
 */
export function ApiErrors(cases: Partial<Record<ErrorStatus, ErrorCase>>) {
  return applyDecorators(
    ...Object.entries(cases).map(([code, errorCase]) => {
      const status = Number(code) as ErrorStatus;
      const spec = typeof errorCase === 'string' ? { description: errorCase } : errorCase;
      const examples = spec.examples ?? (spec.bodies ? [] : DEFAULT_EXAMPLES[status]);
      const named = { ...Object.fromEntries(examples.map((name) => [name, ERROR_EXAMPLES[name]])), ...spec.bodies };
      const response = errorResponse(status, spec.description, named);
      return ApiResponse({ status, ...response });
    }),
  );
}

const DEFAULT_EXAMPLES: Record<ErrorStatus, ExampleName[]> = {
  400: ['validation'],
  401: ['notAuthenticated', 'accessTokenInvalid', 'apiKeyInvalid'],
  402: ['quota', 'keyCreditLimit'],
  403: ['permissionDenied'],
  404: ['notFound'],
  405: ['methodNotAllowed'],
  409: ['idempotencyInProgress'],
  410: ['idempotentAnswerNotKept'],
  413: ['payloadTooLarge'],
  422: ['idempotencyKeyReused'],
  429: ['throttled'],
  500: ['internal'],
  503: ['unavailable'],
};
