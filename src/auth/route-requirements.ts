import type { INestApplication } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { requirementOf } from '../common/auth.decorators.js';
import { addRouteConfig } from '../common/route-config.js';
import { addressRuleOf } from '../rate-limit/limit-per-address.js';

/**
 * Resolves each controller route's credential requirement and `@LimitPerAddress` rule once, at start-up,
 * into its Fastify route config: the early-refusal hook finds them there before Nest runs, and the
 * global guards read them from `request.routeOptions.config` (`requirementFor`) instead of asking the
 * decorators again on every request. Nest copies a route method's metadata onto the handler it
 * registers, Fastify's config included, so this runs before the application's init.
 */
export function describeRoutes(app: INestApplication): void {
  const reflector = app.get(Reflector);
  const scanner = new MetadataScanner();
  const described = new Map<unknown, string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype: controller } of module.controllers.values()) {
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const config = {
          auth: requirementOf(reflector, { handler, controller }),
          addressRule: addressRuleOf(reflector, handler),
        };
        // A method inherited by two controllers is one function: one config for both.
        const seen = described.get(handler);
        if (seen !== undefined && seen !== JSON.stringify(config))
          throw new Error(
            `${controller.name}.${name} is shared with another controller that requires other credentials`,
          );
        described.set(handler, JSON.stringify(config));
        addRouteConfig(handler, config);
      }
    }
  }
}
