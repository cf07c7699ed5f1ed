import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import type { Reflector } from '@nestjs/core';
import { ApiExtension, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { NotAuthenticatedError } from './errors.js';
import type { HttpRequest } from './request.js';
import type { Principal } from './principal.js';
import type { TeamRole } from './roles.js';
import type { ApiKeyScope } from './scopes.js';

export interface AuthRequirement {
  public?: boolean;
  jwtOnly?: boolean;
  adminOnly?: boolean;
  /** The scope an API key needs here (JWTs are not scoped); a key without it gets 403. */
  scope?: ApiKeyScope;
  /**
   * The lowest role in the active organization that may call the route (CONTRACT, third edition: the
   * permission table); a lower one gets 403. Every authenticated route declares one (a test walks them).
   */
  role?: TeamRole;
}

export const AUTH_REQUIREMENT = 'auth:requirement';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A controller route's requirement, resolved once at start-up (auth/route-requirements.ts); absent on
     * Fastify's own routes, which no guard runs for.
     */
    auth?: AuthRequirement;
  }
}

/** A shared response of the document (`#/components/responses/<name>`, defined in src/openapi/). */
const sharedResponse = (status: number, name: string) =>
  ApiResponse({ status, $ref: `#/components/responses/${name}` } as Parameters<typeof ApiResponse>[0]);

/**
 * What the document says about a route's credentials: the schemes it accepts and the 401/403/429 it can
 * give (the notes that explain them are `@ApiController`'s, which sees the route's description whole). A
 * public route declares none (the document builder writes its empty `security`).
 */
function documentation(requirement: AuthRequirement): MethodDecorator[] {
  if (requirement.public) return [];
  const adminOrJwt = requirement.adminOnly || requirement.jwtOnly;
  const schemes = adminOrJwt ? ['jwt'] : ['jwt', 'apiKeyBearer', 'apiKeyHeader'];
  return [
    ...schemes.map((scheme) => ApiSecurity(scheme)),
    sharedResponse(401, requirement.jwtOnly ? 'UnauthorizedJwtOnly' : 'Unauthorized'),
    sharedResponse(429, 'TooManyRequests'),
    ...(requirement.adminOnly ? [sharedResponse(403, 'Forbidden')] : []),
    ...(requirement.role ? [ApiExtension('x-required-role', requirement.role)] : []),
    // A scoped route's 403 names the missing scope: `@ApiController` adds it, unless the route describes its own.
    ...(requirement.role && requirement.role !== 'viewer' && !requirement.adminOnly && !requirement.scope
      ? [sharedResponse(403, 'ForbiddenRole')]
      : []),
    ...(requirement.scope ? [ApiExtension('x-required-scope', requirement.scope)] : []),
  ];
}

/**
 * The credential a route needs (any credential by default), for the auth guard and for the OpenAPI
 * document alike, so the two cannot disagree. On a controller it applies to each route that does not
 * declare its own.
 *
 *     @Authenticated({ adminOnly: true })
 *     @Authenticated({ scope: 'query' })
 */
export function Authenticated(requirement: AuthRequirement = {}) {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      applyDecorators(SetMetadata(AUTH_REQUIREMENT, requirement), ...documentation(requirement))(
        target,
        key,
        descriptor,
      );
      return;
    }
    const controller = target as abstract new (...args: never[]) => unknown;
    SetMetadata(AUTH_REQUIREMENT, requirement)(controller);
    const prototype = controller.prototype as object;
    // Class decorators run after the methods': a route's own requirement is already there to be kept.
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const route = Object.getOwnPropertyDescriptor(prototype, name);
      const handler: unknown = route?.value;
      if (!route || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined)
        continue;
      if (Reflect.getMetadata(AUTH_REQUIREMENT, handler) !== undefined) continue;
      // Fresh decorators per route: @nestjs/swagger's ApiSecurity accumulates in its closure.
      for (const decorate of documentation(requirement)) decorate(prototype, name, route);
    }
  };
}

/**
 * A route's requirement: its own, else its controller's, else any credential. Read from the decorators
 * once, at start-up; a request reads `requirementFor`.
 */
export function requirementOf(
  reflector: Reflector,
  // Nest's own type for what ExecutionContext.getHandler() and getClass() return.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  route: { handler: Function; controller: Function },
): AuthRequirement {
  return (
    reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_REQUIREMENT, [route.handler, route.controller]) ?? {}
  );
}

const ANY_CREDENTIAL: AuthRequirement = Object.freeze({});

/** The requirement of the request's route, as resolved at start-up: what the guards read. */
export const requirementFor = (request: HttpRequest): AuthRequirement =>
  request.routeOptions.config.auth ?? ANY_CREDENTIAL;

/** No credential needed. */
export const Public = () => Authenticated({ public: true });
/** A JWT access token only, of a member with at least `role`: API keys are refused with 401 (key management). */
export const JwtOnly = (role: TeamRole) => Authenticated({ jwtOnly: true, role });
/**
 * A platform administrator's JWT only: anyone else, an API key included, gets 403. Platform work is no
 * organization's: any role in the active one will do.
 */
export const AdminOnly = () => Authenticated({ adminOnly: true, role: 'viewer' });

/** The authenticated caller, as attached by the composite guard. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<HttpRequest>().user;
  // Only a public route has none, and a public route has no caller to ask for.
  if (!principal) throw new NotAuthenticatedError();
  return principal;
});
