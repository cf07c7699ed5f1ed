import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { PrincipalRateLimiter, rateLimitHeaders } from './principal-rate-limiter.js';

/**
 * Counts each authenticated request against its principal's limit and sets the RateLimit-* headers,
 * or throws the 429. Runs after the authentication guard, which attaches `request.user`; public
 * routes have none and are not limited.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly rateLimiter: PrincipalRateLimiter) {}

  canActivate(context: ExecutionContext): boolean {
    const principal = context.switchToHttp().getRequest<HttpRequest>().user;
    if (!principal) return true;
    const limits = this.rateLimiter.consume(principal);
    context.switchToHttp().getResponse<HttpReply>().headers(rateLimitHeaders(limits));
    return true;
  }
}
