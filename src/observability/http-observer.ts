import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../common/principal.js';
import type { InFlightRequests } from '../lifecycle/in-flight.js';
import type { Logger } from './logger.js';
import { httpRequestDuration, httpRequests, httpRequestsInFlight } from './metrics.js';
import { assignRequestId, REQUEST_ID_HEADER } from './request-id.js';
import { scrubSecrets } from './secrets.js';

export interface HttpObserverOptions {
  logger: Logger;
  inFlight: InFlightRequests;
  /** True once the process is shutting down: answers then ask the client to close the connection. */
  draining: () => boolean;
}

const UNMATCHED = '(unmatched)';

/**
 * First middleware of every request: gives it an id (echoed in `X-Request-Id`), counts it in flight
 * for graceful shutdown, and when it ends records the Prometheus figures and one access-log line.
 * Only the route pattern is a label (not the path), so ids in paths do not explode the series.
 */
export function httpObserver({ logger, inFlight, draining }: HttpObserverOptions) {
  const accessLog = logger.isLevelEnabled('info');
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    const requestId = assignRequestId(request);
    response.setHeader(REQUEST_ID_HEADER, requestId);
    if (draining()) response.setHeader('Connection', 'close');
    inFlight.started();
    httpRequestsInFlight.inc();

    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight.finished();
      httpRequestsInFlight.dec();
      const seconds = (performance.now() - started) / 1000;
      const route = request.route?.path ? `${request.baseUrl ?? ''}${request.route.path}` : UNMATCHED;
      const aborted = !response.writableFinished;
      const labels = { method: request.method, route, status: aborted ? 'aborted' : String(response.statusCode) };
      httpRequests.inc(labels);
      httpRequestDuration.observe(labels, seconds);
      if (!accessLog) return;
      const principal = request.user as Principal | undefined;
      logger.info(
        {
          request_id: requestId,
          method: request.method,
          path: scrubSecrets(request.path),
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
    next();
  };
}
