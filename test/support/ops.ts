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
    const labelText = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    const present = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) {
      total = (total ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
