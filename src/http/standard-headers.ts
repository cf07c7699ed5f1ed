import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's choices, with two left to others: CSP (the dashboard sends its own, stricter one, and Swagger
 * UI at /docs needs its scripts) and HSTS (whoever terminates TLS in front of the service knows the
 * domain's policy).
 */
export const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: false,
  strictTransportSecurity: false,
  referrerPolicy: { policy: 'no-referrer' },
};

/**
 * The headers helmet sets on an answer, asked of helmet once. With these options they depend on
 * nothing in the request, and @fastify/helmet rebuilt helmet's middleware on every request (8 % of a
 * `/health/` request's CPU).
 */
export function helmetHeaders(options: HelmetOptions = HELMET_OPTIONS): Readonly<Record<string, string>> {
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: string | number | readonly string[]) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => undefined);
  return Object.freeze(Object.fromEntries(headers));
}

/**
 * Sets the standard headers on every answer, streamed and hijacked ones included (see event-stream.ts),
 * and `Cache-Control: no-store` on every answer of a `@NoStore()` route.
 */
export function sendStandardHeaders(instance: FastifyInstance): void {
  const headers = helmetHeaders();
  instance.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    if (request.routeOptions.config.noStore) reply.header('Cache-Control', 'no-store');
    done();
  });
}
