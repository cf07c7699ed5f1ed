import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { requirementFor } from '../common/auth.decorators.js';
import { MissingScopeError, PermissionDeniedError } from '../common/errors.js';
import type { HttpRequest } from '../common/request.js';
import { roleAtLeast } from '../common/roles.js';

/**
 * What the route admits of an authenticated caller: an API key lacking the scope the route declares
 * (`@Authenticated({ scope })`) gets 403, then a member whose role in the organization is below the
 * route's (`@Authenticated({ role })`), or a key limited to collections on an admin's route, then a non-admin on an `@AdminOnly()` route gets 403. It runs
 * after authentication (a revoked key is a 401 first) and after the rate limit, so a refused request is
 * still counted and still carries the RateLimit-* headers; before the route's own checks. The scopes
 * come with the cached key grant: no database read. JWTs are not scoped.
 */
@Injectable()
export class PermissionsGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const requirement = requirementFor(request);
    const scopes = request.user?.scopes;
    if (requirement.scope && scopes && !scopes.includes(requirement.scope))
      throw new MissingScopeError(requirement.scope);
    // The role travels with the principal (auth/principal.ts): no database read here either.
    if (requirement.role && request.user && !roleAtLeast(request.user.role, requirement.role))
      throw new PermissionDeniedError();
    // A key limited to collections never does an admin's work (invitations, roles, the organization,
    // webhooks): each reaches beyond its collections (an admin it invited would reach every one).
    if (requirement.role && request.user?.collectionIds && roleAtLeast(requirement.role, 'admin'))
      throw new PermissionDeniedError();
    if (requirement.adminOnly && !request.user?.isAdmin) throw new PermissionDeniedError();
    return true;
  }
}
