import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { requirementOf } from '../common/auth.decorators.js';
import { MissingScopeError } from '../common/errors.js';
import type { HttpRequest } from '../common/http.js';

/**
 * Refuses an API key that lacks the scope a route declares (`@Authenticated({ scope })`) with the 403.
 * After authentication (a revoked key is a 401 first) and rate limiting, before the route's own
 * checks. The scopes come with the cached key grant: no database read. JWTs are not scoped.
 */
@Injectable()
export class ScopeGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const requirement = requirementOf(this.reflector, {
      handler: context.getHandler(),
      controller: context.getClass(),
    });
    const scopes = context.switchToHttp().getRequest<HttpRequest>().user?.scopes;
    if (requirement.scope && scopes && !scopes.includes(requirement.scope))
      throw new MissingScopeError(requirement.scope);
    return true;
  }
}
