import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { IdempotencyKeyInvalidError, IdempotencyKeyOnUploadError } from '../common/errors.js';
import { type HttpRequest, pathOf } from '../common/http.js';
import { IdempotencyService, requestHash } from './idempotency.service.js';
import { ReplayedResponse } from './replayed-response.js';

/** 1 to 255 visible ASCII characters (no space, no control character). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on an authenticated POST: the last global guard (auth.module.ts), so it runs after
 * authentication, the rate limit and the scope check (it needs the caller's organization), and before
 * the body is validated or the route runs. A replay is thrown (ReplayedResponse) and sent by the
 * exception filter; the answer of a first run is stored by the `onSend` hook (`storeIdempotentAnswers`).
 * A guard rather than an interceptor: with no global interceptor, Nest runs a route without RxJS.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(private readonly idempotency: IdempotencyService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || !request.user || key === undefined) return true;
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new IdempotencyKeyInvalidError();
    // An upload's parts are read after this point and its multipart boundary changes on each retry.
    if (request.isMultipart()) throw new IdempotencyKeyOnUploadError();
    const hash = requestHash(request.method, pathOf(request.url), request.body);
    const admission = await this.idempotency.admit(request.user.organizationId, key, hash);
    if ('replay' in admission) throw new ReplayedResponse(admission.replay);
    this.idempotency.hold(request, admission.run);
    return true;
  }
}
