import type { FastifyInstance } from 'fastify';
import { clientAddress } from '../common/client-address.js';
import { type HttpRequest, pathOf } from '../common/request.js';
import type { InFlightRequests } from '../lifecycle/in-flight.js';
import type { Logger } from './logger.js';
import { observeHttpRequest, watchRequestsInFlight } from './metrics.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { scrubSecrets } from './secrets.js';

export interface HttpObserverOptions {
  logger: Logger;
  inFlight: InFlightRequests;
  /** True once the process is shutting down: answers then ask the client to close the connection. */
  draining: () => boolean;
}

const UNMATCHED = '(unmatched)';

/**
 * Whose 429s are sampled together: the client address as the per-address limits count it (an IPv6
 * /64), and the key or user, so that tenants throttled behind one NAT each keep their lines.
 */
function throttledClient(request: HttpRequest, principal: HttpRequest['user']): string {
  return `${clientAddress(request)} ${principal?.keyPrefix ?? principal?.userId ?? ''}`;
}

/**
 * Which 429s get an access line: per client (see throttledClient), one a second, carrying how many it
 * stands for. A flood past its limit is answered as fast as it comes (10,000 a second here), and a line
 * for each cost a quarter of the service's throughput and as much in the log pipeline; the metrics
 * still count every one (http_requests_total).
 */
class ThrottledLogSampler {
  private static readonly INTERVAL_MS = 1000;
  private static readonly CLIENTS_MAX = 10_000;
  private readonly clients = new Map<string, { loggedAt: number; skipped: number }>();

  /** Undefined: skip this line. A number: log it, with how many 429s of the client were not logged before it. */
  take(client: string, now = performance.now()): number | undefined {
    const seen = this.clients.get(client);
    if (seen && now - seen.loggedAt < ThrottledLogSampler.INTERVAL_MS) {
      seen.skipped++;
      return undefined;
    }
    if (!seen && this.clients.size >= ThrottledLogSampler.CLIENTS_MAX) this.clients.clear();
    this.clients.set(client, { loggedAt: now, skipped: 0 });
    return seen?.skipped ?? 0;
  }
}

/**
 * The first hook of every request: echoes its id (Fastify's genReqId) in `X-Request-Id`, counts it in
 * flight for graceful shutdown, and when its connection is done records the Prometheus figures and one
 * access-log line. Only the route pattern is a label (not the path), so ids in paths do not explode the
 * series. The end is the response's 'close' (after 'finish', or alone when the client left), so a
 * streamed or aborted answer is counted too.
 */
export function observeRequests(instance: FastifyInstance, { logger, inFlight, draining }: HttpObserverOptions): void {
  const accessLog = logger.isLevelEnabled('info');
  // The access line's fields are ours and hold no credential (the path is scrubbed), so it skips the
  // root's path redaction, which in pino 10 copies every value logged: a third of all that a request
  // allocated, and the young-generation collections it caused stalled every request in flight.
  const accessLogger = logger.child({}, { redact: [] });
  watchRequestsInFlight(() => inFlight.size);
  const throttledLines = new ThrottledLogSampler();
  instance.addHook('onRequest', (request: HttpRequest, reply, done) => {
    const started = performance.now();
    reply.header(REQUEST_ID_HEADER, request.id);
    if (draining()) reply.header('Connection', 'close');
    inFlight.started();

    const response = reply.raw;
    // 'close' follows 'finish' once the answer is written, and comes alone when the client went first.
    response.once('close', () => {
      inFlight.finished();
      const seconds = (performance.now() - started) / 1000;
      const route = request.routeOptions.url ?? UNMATCHED;
      const status = response.writableFinished ? String(response.statusCode) : 'aborted';
      observeHttpRequest(request.method, route, status, seconds);
      if (!accessLog) return;
      const principal = request.user;
      const throttledUnlogged =
        response.statusCode === 429 ? throttledLines.take(throttledClient(request, principal)) : 0;
      if (throttledUnlogged === undefined) return;
      accessLogger.info(
        {
          request_id: request.id,
          method: request.method,
          path: scrubSecrets(pathOf(request.url)),
          route,
          status,
          duration_ms: Math.round(seconds * 100_000) / 100,
          remote_address: request.ip,
          user_id: principal?.userId,
          key_prefix: principal?.keyPrefix ?? undefined,
          throttled_unlogged: throttledUnlogged || undefined,
        },
        'request completed',
      );
    });
    done();
  });
}
