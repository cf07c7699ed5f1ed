import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';
export const REQUEST_ID_MAX = 128;
// What a proxy or client may hand us: short, printable, no separators that could forge log fields.
const ACCEPTABLE = /^[A-Za-z0-9._:@\-]{8,128}$/;

const REQUEST_ID = Symbol('requestId');
type WithRequestId = IncomingMessage & { [REQUEST_ID]?: string };

/** The incoming `X-Request-Id` when it is sane, otherwise a fresh UUID; fixed for the request's life. */
export function assignRequestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  const id = typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
  (request as WithRequestId)[REQUEST_ID] = id;
  return id;
}

/** The request's id, as assigned on arrival (null only for a request that bypassed the middleware). */
export function requestIdOf(request: IncomingMessage): string | null {
  return (request as WithRequestId)[REQUEST_ID] ?? null;
}
