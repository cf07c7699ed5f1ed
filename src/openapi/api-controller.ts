import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { ApiOperation, ApiTags, DECORATORS } from '@nestjs/swagger';
import { AUTH_REQUIREMENT, type AuthRequirement } from '../common/auth.decorators.js';
import { ADDRESS_RULE_EXTENSION } from '../rate-limit/limit-per-address.js';
import { credentialNotes } from './credential-notes.js';
import { errorResponsesFor } from './error-responses.js';
import { IDEMPOTENCY_PARAMETER, idempotentReplayHeaders } from './api-idempotency.js';
import { type Responses, withResponseHeaders } from './response-headers.js';

/** Nest's `RouteParamtypes.BODY`: the index `@Body()` records its parameter under. */
const BODY_PARAMETER = 3;

/**
 * The controller's tag, and each route's documentation completed where the route is declared: the
 * error answers its declaration implies (500 and 503, the database being every route's; 400 and 413
 * when it reads a body; the scope's 403; 409, 410 and 422 for an authenticated POST, which takes an
 * `Idempotency-Key`), under the ones the route declares itself (`@ApiErrors`, `@Authenticated`); the
 * shared response headers; the credential notes first in its description.
 *
 * Write it first, above `@Controller` and a class-wide `@Authenticated`: a class decorator runs after
 * every decorator of its routes and after the class's own written below it, so it sees each route whole.
 */
export function ApiController(tag: string): ClassDecorator {
  return (controller) => {
    ApiTags(tag)(controller);
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      const handler: unknown = descriptor?.value;
      if (!descriptor || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined)
        continue;
      documentRoute(controller, name, descriptor, handler);
    }
  };
}

function documentRoute(controller: object, name: string, descriptor: PropertyDescriptor, handler: object): void {
  const requirement = (Reflect.getMetadata(AUTH_REQUIREMENT, handler) ??
    Reflect.getMetadata(AUTH_REQUIREMENT, controller) ??
    {}) as AuthRequirement;
  const security = (Reflect.getMetadata(DECORATORS.API_SECURITY, handler) ?? []) as unknown[];
  const extensions = (Reflect.getMetadata(DECORATORS.API_EXTENSION, handler) ?? {}) as Record<string, unknown>;
  const parameters = (Reflect.getMetadata(DECORATORS.API_PARAMETERS, handler) ?? []) as { in?: string }[];
  const routeArguments = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, unknown>;
  const authenticated = security.length > 0;
  const idempotent = authenticated && Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST;
  const hasBody =
    parameters.some((parameter) => parameter.in === 'body') ||
    Object.keys(routeArguments).some((key) => key.startsWith(`${BODY_PARAMETER}:`));

  // The route's own responses over its controller's (`@ApiErrors` on the class), over those implied.
  const declared = {
    ...((Reflect.getMetadata(DECORATORS.API_RESPONSE, controller) ?? {}) as Responses),
    ...((Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) ?? {}) as Responses),
  };
  const responses = withResponseHeaders(
    {
      ...errorResponsesFor({
        hasBody,
        scoped: 'x-required-scope' in extensions,
        idempotent,
      }),
      ...declared,
    },
    authenticated,
    ADDRESS_RULE_EXTENSION in extensions,
  );
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, idempotent ? idempotentReplayHeaders(responses) : responses, handler);
  if (idempotent) Reflect.defineMetadata(DECORATORS.API_PARAMETERS, [...parameters, IDEMPOTENCY_PARAMETER], handler);

  const notes = credentialNotes(requirement);
  if (notes.length > 0) {
    const operation = (Reflect.getMetadata(DECORATORS.API_OPERATION, handler) ?? {}) as { description?: string };
    const description = [...notes, operation.description].filter(Boolean).join('\n\n');
    ApiOperation({ ...operation, description })((controller as { prototype: object }).prototype, name, descriptor);
  }
}
