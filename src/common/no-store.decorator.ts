import { applyDecorators, Header } from '@nestjs/common';
import { addRouteConfig } from './route-config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every answer of the route, errors and replays included, carries `Cache-Control: no-store`. */
    noStore?: boolean;
  }
}

/**
 * For routes whose answers carry a token or a full key: no browser, proxy or CDN may keep a copy. The
 * header is set when the request arrives (`sendStandardHeaders`), so it is on every answer of the
 * route (a refusal, an `Idempotency-Key` replay), and by Nest on the route's own answer.
 */
export const NoStore = () =>
  applyDecorators(Header('Cache-Control', 'no-store'), (_target: object, _property, descriptor) => {
    addRouteConfig(descriptor.value as object, { noStore: true });
  });
