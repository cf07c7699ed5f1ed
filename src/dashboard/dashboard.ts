import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * reload of /app/keys works. A missing file under assets/ (or any path with an extension) falls through
 * to Nest, which answers the usual JSON 404. Runs before the guard: the page is public, the API is not.
 */
export function mountDashboard(app: INestApplication, directory = defaultDashboardDirectory()): void {
  const root = resolve(directory);
  const index = join(root, 'index.html');
  if (!existsSync(index)) {
    new Logger('Dashboard').warn(`${index} is missing: run "npm run build" to serve the dashboard at ${DASHBOARD_PATH}/`);
  }
  const files = express.static(root, {
    index: false,
    redirect: false,
    setHeaders: (response, path) => {
      // Vite puts a content hash in every name under assets/, so those never change.
      const immutable = path.startsWith(join(root, 'assets'));
      response.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });

  app.use(DASHBOARD_PATH, (request: Request, response: Response, next: NextFunction) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    const [pathname, query] = splitUrl(request.originalUrl);
    if (pathname === DASHBOARD_PATH) return response.redirect(301, `${DASHBOARD_PATH}/${query}`);
    response.set(SECURITY_HEADERS);
    files(request, response, (error?: unknown) => {
      if (error) return next(error);
      if (request.path.startsWith('/assets/') || extname(request.path) !== '') return next();
      response.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } }, (sendError?: NodeJS.ErrnoException) => {
        if (sendError) next(sendError.code === 'ENOENT' ? undefined : sendError);
      });
    });
  });
}

function splitUrl(url: string): [string, string] {
  const at = url.indexOf('?');
  return at === -1 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}
