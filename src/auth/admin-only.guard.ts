import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { requirementOf } from '../common/auth.decorators.js';
import { PermissionDeniedError } from '../common/errors.js';
import type { HttpRequest } from '../common/http.js';

/**
 * Refuses non-admins on `@AdminOnly()` routes with the 403. It runs after rate limiting, so a refused
 * request is still counted and still carries the RateLimit-* headers, like every authenticated one.
 */
@Injectable()
export class AdminOnlyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const requirement = requirementOf(this.reflector, {
      handler: context.getHandler(),
      controller: context.getClass(),
    });
    if (!requirement.adminOnly) return true;
    if (!context.switchToHttp().getRequest<HttpRequest>().user?.isAdmin) throw new PermissionDeniedError();
    return true;
  }
}
