import { existsSync, readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * The service's version, from its package.json: the nearest one above this module (src/common,
 * dist/common, or a test build's copy elsewhere under the checkout).
 */
export function serviceVersion(): string {
  if (version !== undefined) return version;
  for (let up = new URL('../', import.meta.url); ; up = new URL('../', up)) {
    const file = new URL('package.json', up);
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'knowledge-query-service' && manifest.version) return (version = manifest.version);
    }
    if (up.pathname === '/') return (version = 'unknown');
  }
}
