/**
 * A bare server answering GET /health/ with the same JSON as the service's liveness route,
 * `{status: "ok", timestamp}` (ISO 8601 with `+00:00`): the floor the core section measures the
 * service against. `node bench/floors/server.js <node|fastify> <port>`; run as a child process by
 * bench/lib/floors.js, like the service, so it competes for the CPU the same way. Nothing else:
 * no logging, no middleware, one route.
 */
import http from 'node:http';

const [kind, port] = process.argv.slice(2);
const body = () => JSON.stringify({ status: 'ok', timestamp: new Date().toISOString().replace(/Z$/, '+00:00') });

if (kind === 'node') {
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/health/') {
      const payload = body();
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(payload),
      });
      response.end(payload);
    } else {
      response.writeHead(404).end();
    }
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(port), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
} else if (kind === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  // Fastify serialises through the response schema (fast-json-stringify), its idiomatic fast path.
  app.get(
    '/health/',
    {
      schema: {
        response: {
          200: { type: 'object', properties: { status: { type: 'string' }, timestamp: { type: 'string' } } },
        },
      },
    },
    async () => ({
      status: 'ok',
      timestamp: new Date().toISOString().replace(/Z$/, '+00:00'),
    }),
  );
  await app.listen({ port: Number(port), host: '127.0.0.1' });
  process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
} else {
  throw new Error(`unknown floor ${kind}: node or fastify`);
}
