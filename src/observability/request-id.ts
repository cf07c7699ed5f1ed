import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';
export const REQUEST_ID_MAX = 128;
// What a proxy or client may hand us: short, printable, no separators that could forge log fields.
const ACCEPTABLE = /^[A-Za-z0-9._:@\-]{8,128}$/;

/** Fastify's genReqId: the incoming `X-Request-Id` when it is sane, otherwise a fresh UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
}
