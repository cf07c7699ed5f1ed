import type { ParameterObject } from '@nestjs/swagger';
import { IdempotencyKeyInvalidError, IdempotencyKeyOnUploadError } from '../common/errors.js';
import { CLAIM_SECONDS, KEY_TTL_SECONDS } from '../idempotency/idempotency.service.js';
import { headerRef, type Responses } from './response-headers.js';

/** The request header of every authenticated POST (inline in each, as every parameter of the document is; `@ApiController` adds it). */
export const IDEMPOTENCY_PARAMETER: ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Makes the POST safe to retry. Scoped to your organization and remembered for ${KEY_TTL_SECONDS / 3600} hours. The first request runs
and its status and body are stored (except 409, 429, 500 and 503, so such a retry runs again); a retry with the same key,
method, path and body gets the stored answer with \`Idempotent-Replayed: true\`, without running or being charged again.
The same key with another request: 422; while the first still runs: 409. A streamed query or chat completion is stored as
its final JSON answer, which is what a retry gets. Bounded: an organization's stored answers may take
\`IDEMPOTENCY_ORG_BUDGET_MB\`; past it a new key is refused with 429 before it runs. An answer larger
than \`IDEMPOTENCY_MAX_ANSWER_KB\`, or one the budget could not take, is sent once and not kept: its retry is a 410,
never a second run. A full API key is never stored: a replayed key creation or rotation
carries \`key_withheld\` instead of \`key\`. An empty, over-long or non-ASCII key: 400 \`${new IdempotencyKeyInvalidError().message}\`.
Not accepted on a multipart upload (400 \`${new IdempotencyKeyOnUploadError().message}\`).
A request whose instance died before answering holds the key for at most ${CLAIM_SECONDS / 60} minutes.`,
  // The example sits in the schema: @nestjs/swagger drops a declared parameter's own `example`.
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$', example: 'order-7f3c2a1e-retry-safe' },
};

/**
 * An authenticated POST's responses with `Idempotent-Replayed` on the answers it can replay (the shared
 * error responses, by reference, say it themselves: see the parameter).
 */
export function idempotentReplayHeaders(responses: Responses): Responses {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      response.$ref || !/^[24]/.test(status) || status === '401'
        ? [status, response]
        : [
            status,
            { ...response, headers: { ...response.headers, 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } },
          ],
    ),
  );
}
