import type { INestApplication } from '@nestjs/common';
import type { FastifyCorsOptions } from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from '../config/env.schema.js';
import { sendStandardHeaders } from './standard-headers.js';

/** Request headers a browser app may send: credentials are bearer headers, never cookies. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-API-Key', 'Idempotency-Key', 'X-Request-Id'];

/** Response headers a browser app may read: request ids, credits, rate limits, retries. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Credits-Remaining',
  'X-Credits-Reset',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
];

/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  return {
    // An exact list: a listed Origin is echoed back (with Vary: Origin), any other gets no
    // Access-Control-Allow-Origin, so the browser withholds the answer from that page.
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
    credentials: false,
    optionsSuccessStatus: 204,
  };
}

/** Standard response headers (helmet's, see standard-headers.ts) and CORS (the framework's own: @fastify/cors). */
export function allowBrowsers(app: INestApplication, config: AppConfig): void {
  const fastify = app as NestFastifyApplication;
  sendStandardHeaders(fastify.getHttpAdapter().getInstance());
  if (config.CORS_ORIGINS.length > 0) fastify.enableCors(corsOptions(config.CORS_ORIGINS));
}
