import type { AppConfig } from '../config/env.schema.js';
import { resolve } from 'node:path';
import { serviceVersion } from '../common/version.js';

/**
 * What a boot prints: the version, where the data is (the embedded store's directory, or the
 * server's host and database, never its user or password) and where to go next.
 */
export function bootSummary(config: AppConfig, dashboardServed: boolean): string[] {
  const base = `http://localhost:${config.PORT}`;
  return [
    `Knowledge Query Service ${serviceVersion()} (Node ${process.version}, NODE_ENV=${config.NODE_ENV}) listening on ${base} (port ${config.PORT}, every interface)`,
    `Data: ${storeOf(config)}`,
    [
      dashboardServed ? `Dashboard ${base}/app/` : 'Dashboard not built (run "npm run build")',
      `API reference ${base}/docs`,
      `health ${base}/health/`,
    ].join(' · '),
  ];
}

function storeOf(config: AppConfig): string {
  if (!config.DATABASE_URL) return `the embedded PostgreSQL store in ${resolve(config.DATA_DIR)} (no DATABASE_URL)`;
  try {
    const url = new URL(config.DATABASE_URL);
    const database = url.pathname.replace(/^\//, '') || '(default database)';
    return `PostgreSQL at ${url.hostname}${url.port ? `:${url.port}` : ''}, database ${decodeURIComponent(database)}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}
