import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on an authenticated POST: the last global guard (request-pipeline.ts), so it runs
 * after authentication, the rate limit and the permissions (it needs the caller's organization), and
 * before the body is validated or the route runs. All it does is ask IdempotencyService to claim the
 * key (or throw the replay). A guard rather than an interceptor: with no global interceptor, Nest runs
 * a route without RxJS.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(private readonly idempotency: IdempotencyService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    await this.idempotency.claim(http.getRequest<HttpRequest>(), http.getResponse<HttpReply>());
    return true;
  }
}
