import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../common/errors.js';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { AddressLimits } from '../rate-limit/address-limits.js';
import { clientAddress } from '../common/client-address.js';
import { presentedCredential } from './credential.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtAccessStrategy } from './strategies/jwt-access.strategy.js';

export type Answer = (error: ApiError, request: HttpRequest, reply: HttpReply) => void;

/**
 * Refuses, once a request's headers are read and before Nest runs (no body read, no router, guards or
 * filter), what this instance already knows it must refuse:
 *  - on a route under a per-address limit (`@LimitPerAddress`), an address past that limit;
 *  - on a route that needs a credential, from an address that keeps presenting bad ones, a credential
 *    not verified recently (clients behind one NAT keep working); after the 401s that the auth guard
 *    gives first (no credential, an API key where only a JWT is accepted).
 * Nearly every request of a flood is one of these, and through Nest each cost about three times the
 * CPU: the flood's queue on the event loop is what everyone else's requests wait behind. The guards
 * still count and refuse what is new (AddressLimitGuard, CompositeAuthGuard's failures).
 * Reads the route's requirement and address rule as `describeRoutes` (route-requirements.ts) resolved
 * them; a route without one is Fastify's own and not refused here. Call before the application's init,
 * after the hooks whose headers a refusal carries (CORS, ids); request-pipeline.ts does.
 */
export function refuseEarly(app: INestApplication, answer: Answer): void {
  const limits = app.get(AddressLimits);
  const jwt = app.get(JwtAccessStrategy);
  const apiKeys = app.get(ApiKeyStrategy);

  const refusal = (request: HttpRequest): ApiError | null => {
    const { auth, addressRule } = request.routeOptions.config;
    if (!auth) return null;
    const address = clientAddress(request);
    if (addressRule) {
      const refusedMs = limits.refusedMs(addressRule, address);
      if (refusedMs > 0) return limits.refusal(addressRule, refusedMs);
    }
    if (auth.public) return null;
    const credential = presentedCredential(request);
    if (!credential || (credential.kind === 'api_key' && auth.jwtOnly)) return null;
    const known = credential.kind === 'api_key' ? apiKeys.isKnown(credential.value) : jwt.isKnown(credential.value);
    if (known) return null;
    const refusedMs = limits.failuresRefusedMs(address);
    return refusedMs > 0 ? limits.refusal('failed_auth', refusedMs) : null;
  };

  const instance = app.getHttpAdapter().getInstance() as FastifyInstance;
  instance.addHook('onRequest', (request: HttpRequest, reply, done) => {
    const error = refusal(request);
    if (error) answer(error, request, reply);
    else done();
  });
}
