import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { HttpRequest } from './http.js';
import type { Principal } from './principal.js';

export interface AuthRequirement {
  public?: boolean;
  jwtOnly?: boolean;
  adminOnly?: boolean;
}

export const AUTH_REQUIREMENT = 'auth:requirement';

/** No credential needed. */
export const Public = () => SetMetadata(AUTH_REQUIREMENT, { public: true } satisfies AuthRequirement);
/** A JWT access token only: API keys are refused with 401 (key management). */
export const JwtOnly = () => SetMetadata(AUTH_REQUIREMENT, { jwtOnly: true } satisfies AuthRequirement);
/** A platform administrator's JWT only: anyone else, an API key included, gets 403. */
export const AdminOnly = () => SetMetadata(AUTH_REQUIREMENT, { adminOnly: true } satisfies AuthRequirement);

/** The authenticated caller, as attached by the composite guard. */
export const CurrentPrincipal = createParamDecorator(
  (_: unknown, context: ExecutionContext): Principal => context.switchToHttp().getRequest<HttpRequest>().user as Principal,
);
