import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { IdempotencyKeyInvalidError, IdempotencyKeyOnUploadError } from '../common/errors.js';
import { type HttpRequest, pathOf } from '../common/http.js';
import { IdempotencyService, requestHash } from './idempotency.service.js';
import { ReplayedResponse } from './replayed-response.js';

/** 1 to 255 visible ASCII characters (no space, no control character). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on an authenticated POST. A global interceptor, so it runs after the guards
 * (authentication and the rate limit: it needs the caller's organization) and before the body is
 * validated or the route runs. The answer is stored by the `onSend` hook (`storeIdempotentAnswers`).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly idempotency: IdempotencyService) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || !request.user || key === undefined) return next.handle();
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new IdempotencyKeyInvalidError();
    // An upload's parts are read after this point and its multipart boundary changes on each retry.
    if (request.isMultipart()) throw new IdempotencyKeyOnUploadError();
    const hash = requestHash(request.method, pathOf(request.url), request.body);
    const admission = await this.idempotency.admit(request.user.organizationId, key, hash);
    if ('replay' in admission) throw new ReplayedResponse(admission.replay);
    this.idempotency.hold(request, admission.run);
    return next.handle();
  }
}
