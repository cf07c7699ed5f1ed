import type { FastifyInstance } from 'fastify';
import { RouteTable } from '../../src/common/route-table.js';
import type { DestinationStream } from '../../src/observability/logger.js';

/** Helpers for the operations tests (logs, metrics, limits, faults). */

/** A log destination that keeps every JSON line the service writes, for assertions. */
export class CapturedLogs implements DestinationStream {
  readonly lines: string[] = [];

  write(line: string): void {
    this.lines.push(line);
  }

  get text(): string {
    return this.lines.join('');
  }

  entries(): Record<string, unknown>[] {
    return this.lines.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line));
  }
}

/** One sample of a Prometheus text exposition, e.g. `value(text, 'http_requests_total', {route: '/health'})`. */
export function metricValue(exposition: string, name: string, labels: Record<string, string> = {}): number | null {
  let total: number | null = null;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /^\{(.*)\}/.exec(line.slice(name.length))?.[1] ?? '';
    const present = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) {
      total = (total ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

export interface RegisteredRoute {
  method: string;
  path: string;
}

/** Every route the service registered (Nest's controllers included), as `{method, path}`. */
export function registeredRoutes(app: { getHttpAdapter(): { getInstance(): unknown } }): RegisteredRoute[] {
  return RouteTable.of(app.getHttpAdapter().getInstance() as FastifyInstance).routes();
}

/**
 * A fingerprint of everything stored in the public schema (the migrations table aside): equal
 * fingerprints mean no row was added, removed or changed. `ignore` names columns that change on
 * their own, e.g. `api_keys.last_used_at`, written in the background after a key is used.
 */
export async function databaseFingerprint(
  db: { query(sql: string): Promise<{ rows: Record<string, unknown>[] }> },
  ignore: string[] = ['api_keys.last_used_at'],
): Promise<string> {
  const { rows } = await db.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const tables = rows.map((row) => String(row.table_name)).filter((name) => name !== 'migrations');
  const parts = tables.map((name) => {
    const dropped = ignore
      .filter((column) => column.startsWith(`${name}.`))
      .map((column) => ` - '${column.slice(name.length + 1)}'`)
      .join('');
    return `SELECT '${name}' AS t, md5(coalesce(string_agg((to_jsonb(x)${dropped})::text, '|' ORDER BY (to_jsonb(x)${dropped})::text), '')) AS h FROM "${name}" x`;
  });
  const result = await db.query(
    `SELECT string_agg(t || ':' || h, ',' ORDER BY t) AS fingerprint FROM (${parts.join(' UNION ALL ')}) s`,
  );
  return String(result.rows[0].fingerprint);
}
