import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Passport } from 'passport';
import { requirementFor } from '../common/auth.decorators.js';
import {
  AccessTokenInvalidError,
  ApiKeyInvalidError,
  ApiKeyNotAcceptedError,
  NotAuthenticatedError,
} from '../common/errors.js';
import type { HttpReply, HttpRequest } from '../common/request.js';
import type { Principal } from '../common/principal.js';
import { observeCredential } from '../observability/metrics.js';
import { AddressLimits } from '../rate-limit/address-limits.js';
import { clientAddress } from '../common/client-address.js';
import { presentedCredential } from './credential.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtAccessStrategy } from './strategies/jwt-access.strategy.js';

type PassportMiddleware = (request: HttpRequest, reply: HttpReply, next: (error?: Error) => void) => void;

/**
 * The first guard in front of every route: unless the route is public, it takes the credential (read
 * once per request, credential.ts), picks the Passport strategy by its kind and attaches the principal
 * the strategy made (auth/principal.ts). The route's requirement was resolved at start-up
 * (route-requirements.ts). Rate limiting and the route's permissions follow as their own guards
 * (request-pipeline.ts). Failures throw; it never returns false, which Nest would turn into a 403.
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
    private readonly jwtStrategy: JwtAccessStrategy,
    private readonly apiKeyStrategy: ApiKeyStrategy,
    private readonly addressLimits: AddressLimits,
  ) {
    this.passport.use('jwt', jwtStrategy);
    this.passport.use('api-key', apiKeyStrategy);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const requirement = requirementFor(request);
    if (requirement.public) return true;

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
              this.authenticate('api-key', request, context, () => new ApiKeyInvalidError()),
            )
          : await observeCredential(
              'jwt',
              this.authenticate('jwt', request, context, () => new AccessTokenInvalidError()),
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
    request: HttpRequest,
    context: ExecutionContext,
    failure: () => Error,
  ): Promise<Principal> {
    return new Promise((resolve, reject) => {
      const done = (error: Error | null | undefined, principal?: Principal | false) => {
        if (error) reject(error);
        else if (!principal) reject(failure());
        else resolve(principal);
      };
      // Passport types its middleware as `any`; this is its shape.
      const run = this.passport.authenticate(strategy, { session: false }, done) as PassportMiddleware;
      run(request, context.switchToHttp().getResponse<HttpReply>(), (error) => done(error ?? failure()));
    });
  }
}
