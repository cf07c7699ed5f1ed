import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Passport } from 'passport';
import { requirementOf } from '../common/auth.decorators.js';
import {
  AccessTokenInvalidError,
  ApiKeyInvalidError,
  ApiKeyNotAcceptedError,
  NotAuthenticatedError,
} from '../common/errors.js';
import type { HttpReply, HttpRequest } from '../common/http.js';
import type { Principal } from '../common/principal.js';
import { observeCredential } from '../observability/metrics.js';
import { AddressLimits } from '../rate-limit/address-limits.js';
import { clientAddress } from '../common/client-address.js';
import { presentedCredential } from './credential.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtAccessStrategy } from './strategies/jwt-access.strategy.js';

type PassportMiddleware = (request: HttpRequest, reply: HttpReply, next: (error?: Error) => void) => void;

/**
 * The first guard in front of every route: unless the route is public, it reads the credential, picks
 * the Passport strategy by its prefix and attaches the principal. Rate limiting and `@AdminOnly()`
 * follow as their own guards. Failures throw; it never returns false, which Nest would turn into a
 * 403.
 */
@Injectable()
export class CompositeAuthGuard implements CanActivate {
  /**
   * This application's own Passport: the global one (which @nestjs/passport's AuthGuard uses) holds
   * the strategies of whichever application was created last, so a second instance in one process
   * (tests, benchmarks) would authenticate against the other's database and key cache.
   */
  private readonly passport = new Passport();

  constructor(
    private readonly reflector: Reflector,
    private readonly jwtStrategy: JwtAccessStrategy,
    private readonly apiKeyStrategy: ApiKeyStrategy,
    private readonly addressLimits: AddressLimits,
  ) {
    this.passport.use('jwt', jwtStrategy);
    this.passport.use('api-key', apiKeyStrategy);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = requirementOf(this.reflector, {
      handler: context.getHandler(),
      controller: context.getClass(),
    });
    if (requirement.public) return true;

    const request = context.switchToHttp().getRequest<HttpRequest>();
    const credential = presentedCredential(request);
    if (!credential) throw new NotAuthenticatedError();
    if (credential.kind === 'api_key' && requirement.jwtOnly) throw new ApiKeyNotAcceptedError();

    // An address that keeps presenting bad credentials (forged keys, guessed tokens) is refused before
    // any lookup by the hook in early-refusals.ts; here its failures are counted, after the fact, so a
    // valid credential never waits on the count.
    let principal: Principal;
    try {
      principal =
        credential.kind === 'api_key'
          ? await observeCredential(
              'api_key',
              this.authenticate('api-key', context, () => new ApiKeyInvalidError()),
            )
          : await observeCredential(
              'jwt',
              this.authenticate('jwt', context, () => new AccessTokenInvalidError()),
            );
    } catch (error) {
      if (error instanceof ApiKeyInvalidError || error instanceof AccessTokenInvalidError)
        await this.addressLimits.recordFailure(clientAddress(request));
      throw error;
    }
    request.user = principal;
    return true;
  }

  /** Runs one strategy; our typed errors pass through, any other failure becomes `failure()`. */
  private authenticate(
    strategy: 'jwt' | 'api-key',
    context: ExecutionContext,
    failure: () => Error,
  ): Promise<Principal> {
    const http = context.switchToHttp();
    return new Promise((resolve, reject) => {
      const done = (error: Error | null | undefined, principal?: Principal | false) => {
        if (error) reject(error);
        else if (!principal) reject(failure());
        else resolve(principal);
      };
      // Passport types its middleware as `any`; this is its shape.
      const run = this.passport.authenticate(strategy, { session: false }, done) as PassportMiddleware;
      run(http.getRequest<HttpRequest>(), http.getResponse<HttpReply>(), (error) => done(error ?? failure()));
    });
  }
}
