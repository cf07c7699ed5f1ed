import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { AUTH_REQUIREMENT, type AuthRequirement } from '../common/auth.decorators.js';
import {
  AccessTokenInvalidError,
  ApiKeyInvalidError,
  ApiKeyNotAcceptedError,
  NotAuthenticatedError,
  PermissionDeniedError,
} from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { presentedCredential } from './credential.js';

/** A Passport guard that rethrows our typed errors instead of Nest's generic 401. */
function strategyGuard(strategy: 'jwt' | 'api-key', failure: () => Error) {
  return class extends AuthGuard(strategy) {
    handleRequest<T>(error: unknown, principal: T): T {
      if (error) throw error;
      if (!principal) throw failure();
      return principal;
    }
  };
}

const JwtGuard = strategyGuard('jwt', () => new AccessTokenInvalidError());
const ApiKeyGuard = strategyGuard('api-key', () => new ApiKeyInvalidError());

/**
 * The one guard in front of every route. It reads the credential, picks the Passport strategy by its
 * prefix, and then applies the route's requirement. Failures throw (401/403); it never returns false,
 * which Nest would turn into a 403.
 */
@Injectable()
export class CompositeAuthGuard implements CanActivate {
  private readonly jwt = new JwtGuard();
  private readonly apiKey = new ApiKeyGuard();

  constructor(private readonly reflector: Reflector) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement =
      this.reflector.getAllAndOverride<AuthRequirement>(AUTH_REQUIREMENT, [context.getHandler(), context.getClass()]) ?? {};
    if (requirement.public) return true;

    const request = context.switchToHttp().getRequest<Request>();
    const credential = presentedCredential(request);
    if (!credential) throw new NotAuthenticatedError();
    if (credential.kind === 'api_key' && requirement.jwtOnly) throw new ApiKeyNotAcceptedError();

    await (credential.kind === 'api_key' ? this.apiKey : this.jwt).canActivate(context);
    const principal = request.user as Principal;
    if (requirement.adminOnly && !principal.isAdmin) throw new PermissionDeniedError();
    return true;
  }
}
