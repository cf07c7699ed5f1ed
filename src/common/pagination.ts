import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { HttpRequest } from './request.js';
import { ValidationFailedError } from './errors.js';

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

function readInteger(request: HttpRequest, name: string, fallback: number, min: number, max: number): number {
  const raw = (request.query as Record<string, unknown>)[name];
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw ValidationFailedError.field(name, `Must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

/** `?limit=&offset=` (limit 1 to 100, default 20), validated: a bad value is a 400 naming it. */
export const Pagination = createParamDecorator((_: unknown, context: ExecutionContext): PageRequest & { url: URL } => {
  const request = context.switchToHttp().getRequest<HttpRequest>();
  return {
    limit: readInteger(request, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: readInteger(request, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    // Only the path and query are used: the Host header is the client's to forge or garble.
    url: new URL(request.originalUrl, PLACEHOLDER_ORIGIN),
  };
});

const PLACEHOLDER_ORIGIN = 'http://placeholder.invalid';

/**
 * DRF's paginated body. `next`/`previous` are links relative to the service's origin (path and
 * query, e.g. `/v1/documents/?limit=20&offset=20`), never built from the request's Host header.
 */
export function toPage<T>(page: PageRequest & { url: URL }, count: number, results: T[]): Page<T> {
  const link = (offset: number) => {
    const url = new URL(page.url);
    url.searchParams.set('limit', String(page.limit));
    url.searchParams.set('offset', String(offset));
    return `${url.pathname}${url.search}`;
  };
  return {
    count,
    next: page.offset + page.limit < count ? link(page.offset + page.limit) : null,
    previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
    results,
  };
}
