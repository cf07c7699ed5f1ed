import type { FastifyInstance } from 'fastify';
import { type HttpRequest, pathOf } from '../common/http.js';
import type { InFlightRequests } from '../lifecycle/in-flight.js';
import type { Logger } from './logger.js';
import { httpRequestDuration, httpRequests, httpRequestsInFlight } from './metrics.js';
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
 * The first hook of every request: echoes its id (Fastify's genReqId) in `X-Request-Id`, counts it in
 * flight for graceful shutdown, and when its connection is done records the Prometheus figures and one
 * access-log line. Only the route pattern is a label (not the path), so ids in paths do not explode the
 * series. The end is read from the socket's response ('finish' or 'close'), so a streamed or aborted
 * answer is counted too.
 */
export function observeRequests(instance: FastifyInstance, { logger, inFlight, draining }: HttpObserverOptions): void {
  const accessLog = logger.isLevelEnabled('info');
  instance.addHook('onRequest', (request: HttpRequest, reply, done) => {
    const started = performance.now();
    reply.header(REQUEST_ID_HEADER, request.id);
    if (draining()) reply.header('Connection', 'close');
    inFlight.started();
    httpRequestsInFlight.inc();

    const response = reply.raw;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      inFlight.finished();
      httpRequestsInFlight.dec();
      const seconds = (performance.now() - started) / 1000;
      const route = request.routeOptions.url ?? UNMATCHED;
      const aborted = !response.writableFinished;
      const labels = { method: request.method, route, status: aborted ? 'aborted' : String(response.statusCode) };
      httpRequests.inc(labels);
      httpRequestDuration.observe(labels, seconds);
      if (!accessLog) return;
      const principal = request.user;
      logger.info(
        {
          request_id: request.id,
          method: request.method,
          path: scrubSecrets(pathOf(request.url)),
          route,
          status: labels.status,
          duration_ms: Math.round(seconds * 100_000) / 100,
          remote_address: request.ip,
          user_id: principal?.userId,
          key_prefix: principal?.keyPrefix ?? undefined,
        },
        'request completed',
      );
    };
    response.once('finish', finish);
    response.once('close', finish);
    done();
  });
}
