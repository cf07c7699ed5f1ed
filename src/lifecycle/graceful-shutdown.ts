import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AppConfig } from '../config/env.schema.js';
import { ShutdownState } from './shutdown-state.js';
import { InFlightRequests } from './in-flight.js';

export interface ShutdownOptions {
  signals?: NodeJS.Signals[];
  exit?: (code: number) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM (and SIGINT): readiness turns 503 at once; for SHUTDOWN_DELAY_MS the service still accepts
 * requests (load balancers need a moment to stop routing here; answers carry `Connection: close`);
 * then the listener closes, requests in flight get up to SHUTDOWN_GRACE_MS to finish, Nest's shutdown
 * hooks run (pending key stamps flushed, LISTEN connection and pool closed), and the process exits 0.
 */
export function installGracefulShutdown(app: INestApplication, config: AppConfig, options: ShutdownOptions = {}): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const logger = new Logger('Shutdown');
  let started = false;

  const shutDown = async (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    app.get(ShutdownState).draining = true;
    const inFlight = app.get(InFlightRequests);
    const server = app.getHttpServer() as Server;
    logger.log(`${signal}: not ready any more; ${inFlight.size} request(s) in flight`);
    if (config.SHUTDOWN_DELAY_MS > 0) await sleep(config.SHUTDOWN_DELAY_MS);

    server.close();
    server.closeIdleConnections();
    const finished = await inFlight.whenIdle(config.SHUTDOWN_GRACE_MS);
    if (!finished)
      logger.warn(`grace period of ${config.SHUTDOWN_GRACE_MS} ms over; ${inFlight.size} request(s) cut off`);
    server.closeAllConnections();

    let code = 0;
    try {
      await app.close();
      logger.log('closed cleanly');
    } catch (error) {
      code = 1;
      logger.error(`shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    exit(code);
  };

  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as NodeJS.Signals[])) {
    process.once(signal, (received) => void shutDown(received));
  }
}
