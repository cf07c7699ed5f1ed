import type { OperationObject, ParameterObject } from '@nestjs/swagger';
import { ERROR_EXAMPLES } from './error-responses.js';
import { headerRef } from './response-headers.js';

const KEY_PARAMETER = 'Idempotency-Key';

/** The request header of every authenticated POST (`#/components/parameters/Idempotency-Key`). */
export const IDEMPOTENCY_PARAMETER: ParameterObject = {
  name: KEY_PARAMETER,
  in: 'header',
  required: false,
  description: `Makes the POST safe to retry. Scoped to your organization and remembered for 24 hours. The first request runs
and its status and body are stored (except 409, 429, 500 and 503, so such a retry runs again); a retry with the same key,
method, path and body gets the stored answer with \`Idempotent-Replayed: true\`, without running or being charged again.
The same key with another request: 422; while the first still runs: 409. A streamed query is stored as its final JSON
answer, which is what a retry gets. An empty, over-long or non-ASCII key: 400 \`${ERROR_EXAMPLES.idempotencyKeyInvalid.detail}\`.
Not accepted on a multipart upload (400 \`${ERROR_EXAMPLES.idempotencyKeyOnUpload.detail}\`).
A request whose instance died before answering holds the key for at most 5 minutes.`,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
  example: 'order-7f3c2a1e-retry-safe',
};

export const IDEMPOTENCY_COMPONENTS = { [KEY_PARAMETER]: IDEMPOTENCY_PARAMETER };

type Responses = Record<string, { $ref?: string; headers?: Record<string, unknown> }>;

/**
 * An authenticated POST: the `Idempotency-Key` parameter, and `Idempotent-Replayed` on the answers it
 * can replay (the shared error responses, by reference, say it themselves: see the parameter).
 */
export function describeIdempotentPost(operation: OperationObject, responses: Responses): void {
  operation.parameters = [...(operation.parameters ?? []), { $ref: `#/components/parameters/${KEY_PARAMETER}` }];
  for (const [status, response] of Object.entries(responses)) {
    if (response.$ref || !/^[24]/.test(status) || status === '401') continue;
    response.headers = { ...response.headers, 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };
  }
}
