import type { Express } from 'express';

interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/** Answers "which methods does this path support?", so a known path with the wrong method is a 405. */
export class RouteTable {
  constructor(private readonly app: Express) {}

  methodsFor(path: string): string[] {
    const stack = (this.app as unknown as { router?: { stack: RouteLayer[] } }).router?.stack ?? [];
    const methods = new Set<string>();
    for (const layer of stack) {
      if (!layer.route || !layer.match(path)) continue;
      for (const [method, enabled] of Object.entries(layer.route.methods)) {
        if (enabled && method !== '_all') methods.add(method.toUpperCase());
      }
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }
}
