import send from '@fastify/send';
import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '../common/errors.js';
import { pathOf } from '../common/request.js';
import { NOT_AN_OPERATION } from '../common/route-table.js';
import { serviceVersion } from '../common/version.js';

export const DASHBOARD_PATH = '/app';

/** `web/dist` in the checkout: two levels up from both src/dashboard and dist/dashboard. */
export function defaultDashboardDirectory(): string {
  return fileURLToPath(new URL('../../web/dist/', import.meta.url));
}

// The dashboard loads only its own hashed files and talks only to this origin.
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/**
 * Serves the single-page dashboard at /app/: its files, and index.html for any other page path so a
 * reload of /app/keys works. A missing file under assets/ (or any path with an extension) is the
 * usual JSON 404, and so is another method (these routes are not API operations, so no 405). The
 * page is public (these routes are not Nest's, so no guard runs); the API is not.
 */
export function mountDashboard(app: INestApplication, directory = defaultDashboardDirectory()): void {
  const root = resolve(directory);
  if (!dashboardBuilt(directory)) {
    new Logger('Dashboard').warn(
      `${join(root, 'index.html')} is missing: run "npm run build" to serve the dashboard at ${DASHBOARD_PATH}/`,
    );
  }
  const instance = app.getHttpAdapter().getInstance() as FastifyInstance;

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = pathOf(request.url);
    if (pathname === DASHBOARD_PATH)
      return reply.redirect(`${DASHBOARD_PATH}/${request.url.slice(pathname.length)}`, 301);
    const inside = pathname.slice(DASHBOARD_PATH.length);
    // Vite puts a content hash in every name under assets/, so those never change.
    const asset = inside.startsWith('/assets/');
    const file = asset || extname(inside) !== '' ? inside : '/index.html';
    // @fastify/send keeps the path inside root (no `..`, no dotfiles) and sets type, length and ETag.
    const sent = await send(request.raw, file, { root, index: false, dotfiles: 'deny', cacheControl: false });
    if (sent.statusCode >= 400) throw new NotFoundError();
    return reply
      .code(sent.statusCode)
      .headers({
        ...sent.headers,
        ...SECURITY_HEADERS,
        'Cache-Control': asset ? 'public, max-age=31536000, immutable' : 'no-cache',
      })
      .send(sent.stream);
  };
  instance.get(DASHBOARD_PATH, { config: NOT_AN_OPERATION }, page);
  instance.get(`${DASHBOARD_PATH}/*`, { config: NOT_AN_OPERATION }, page);
  instance.get('/', { config: NOT_AN_OPERATION }, home);
}

export function dashboardBuilt(directory = defaultDashboardDirectory()): boolean {
  return existsSync(join(resolve(directory), 'index.html'));
}

/** Where to go from the service's root: the same links `GET /` answers to a client that is not a browser. */
export const HOME_LINKS = {
  dashboard: `${DASHBOARD_PATH}/`,
  docs: '/docs',
  openapi: '/openapi.json',
  health: '/health/',
} as const;

/**
 * `GET /`: a browser (its Accept names text/html) is sent to the dashboard; any other client gets a
 * small JSON index of links, relative to the service as pagination links are.
 */
function home(request: FastifyRequest, reply: FastifyReply) {
  const accept = request.headers.accept ?? '';
  if (/\btext\/html\b/i.test(accept)) return reply.redirect(HOME_LINKS.dashboard, 302);
  return reply.send({ name: 'Knowledge Query Service', version: serviceVersion(), links: HOME_LINKS });
}
