import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';
import type { FastifyContextConfig } from 'fastify';

/**
 * Adds to a Nest route's Fastify route config (what @nestjs/platform-fastify's `@RouteConfig()` sets,
 * merged here rather than replaced), so that a Fastify hook can read what the route's decorators say
 * from `request.routeOptions.config` before Nest runs.
 */
export function addRouteConfig(handler: object, config: FastifyContextConfig): void {
  const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as FastifyContextConfig;
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...config }, handler);
}
