import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ApiTags, DECORATORS } from '@nestjs/swagger';

type Responses = Record<string, { $ref?: string; headers?: Record<string, unknown> }>;

const CORS_HEADERS = { 'Access-Control-Allow-Origin': { $ref: '#/components/headers/Access-Control-Allow-Origin' } };
const shared = (name: string) => ({ $ref: `#/components/responses/${name}` });

/**
 * The documentation of the probes' public GETs (readiness, the metrics scrape), which stand on floors
 * below `openapi/` and so cannot use its `@ApiController`: the same completion for a public route that
 * reads no body, written with the routes. 500 anywhere; 503 when the route reads the database and does
 * not describe its own; `Access-Control-Allow-Origin` on each answer the route describes. Write it first,
 * above `@Controller` (a class decorator runs after its routes' decorators). The liveness probe, a
 * Fastify route, is declared whole in liveness.ts.
 */
export function ApiProbeController(tag: string, { usesDatabase }: { usesDatabase: boolean }): ClassDecorator {
  return (controller) => {
    ApiTags(tag)(controller);
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const declared = (Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) ?? {}) as Responses;
      const described = Object.fromEntries(
        Object.entries(declared).map(([status, response]) => [
          status,
          { ...response, headers: { ...response.headers, ...CORS_HEADERS } },
        ]),
      );
      const generic = {
        '500': shared('InternalError'),
        ...(usesDatabase ? { '503': shared('ServiceUnavailable') } : {}),
      };
      Reflect.defineMetadata(DECORATORS.API_RESPONSE, { ...generic, ...described }, handler);
    }
  };
}
