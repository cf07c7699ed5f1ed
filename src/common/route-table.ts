import Router from 'find-my-way';
import type { FastifyInstance, RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route that answers for a path but is not an API operation: a wrong method there stays a 404. */
    notAnOperation?: boolean;
  }
}

export const NOT_AN_OPERATION = { notAnOperation: true } as const;

/**
 * Answers "which methods does this path support?", so a known path with the wrong method is a 405.
 * Fastify answers such a request 404 like an unknown path; this table, fed by every route registered
 * (the same router Fastify uses, with the same trailing-slash rule), tells the two apart.
 */
export class RouteTable {
  private readonly router = Router({ ignoreTrailingSlash: true });
  private readonly methods = new Map<string, Set<string>>();

  private static readonly tables = new WeakMap<FastifyInstance, RouteTable>();

  /** Records every route added to `instance` from now on; call before the routes are registered. */
  static listen(instance: FastifyInstance): RouteTable {
    const table = new RouteTable();
    instance.addHook('onRoute', (route) => table.add(route));
    RouteTable.tables.set(instance, table);
    return table;
  }

  /** The table recording `instance`'s routes (tests walk every route with it). */
  static of(instance: FastifyInstance): RouteTable {
    const table = RouteTable.tables.get(instance);
    if (!table) throw new Error('RouteTable.listen was not called for this instance');
    return table;
  }

  private add(route: RouteOptions): void {
    if (route.config?.notAnOperation) return;
    for (const method of [route.method].flat()) {
      // CORS answers OPTIONS on every path: not a method of any one route. HEAD comes with every GET.
      if ((method === 'OPTIONS' && route.url.includes('*')) || method === 'HEAD') continue;
      let methods = this.methods.get(route.url);
      if (!methods) {
        methods = new Set();
        this.methods.set(route.url, methods);
        this.router.on('GET', route.url, () => undefined, { url: route.url });
      }
      methods.add(method);
    }
  }

  methodsFor(path: string): string[] {
    const found = this.router.find('GET', path) as { store?: { url: string } } | null;
    const methods = new Set(found?.store ? this.methods.get(found.store.url) : []);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  /** Every recorded route as `{method, path}` (HEAD, which every GET has, left out). */
  routes(): { method: string; path: string }[] {
    return [...this.methods].flatMap(([path, methods]) => [...methods].map((method) => ({ method, path })));
  }
}
