import type { INestApplication, LoggerService } from '@nestjs/common';
import type { AppConfig } from '../config/env.schema.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { InFlightRequests } from '../lifecycle/in-flight.js';
import type { FastifyInstance } from 'fastify';
import { observeRequests } from './http-observer.js';
import { createRootLogger, type DestinationStream, type Logger, PinoNestLogger } from './logger.js';

export interface LoggingOptions {
  /** Nest's logger as createApp's caller asked: undefined = JSON logs, false = silent (tests). */
  logger?: LoggerService | false;
  /** Where JSON log lines go instead of stdout; given, logs are written even when `logger` is false. */
  logStream?: DestinationStream;
}

export interface Logging {
  root: Logger;
  /** Fastify's: the root at `warn` at most, so its "Server listening at …" lines (one per interface) stay out of a boot's few lines. */
  fastify: Logger;
  /** What to hand NestFactory.create as `logger`. */
  nest: LoggerService | false;
}

export function createLogging(config: AppConfig, options: LoggingOptions): Logging {
  const silent = options.logger === false && !options.logStream;
  const root = createRootLogger({ LOG_LEVEL: silent ? 'silent' : config.LOG_LEVEL }, options.logStream);
  const nest = options.logger === undefined || options.logStream ? new PinoNestLogger(root) : options.logger;
  const fastify = root.isLevelEnabled('warn') && root.level !== 'warn' ? root.child({}, { level: 'warn' }) : root;
  return { root, fastify, nest };
}

/** Installs the first hook of every request (request id, metrics, access log, in-flight count). */
export function observeHttp(app: INestApplication, logging: Logging): void {
  const shutdown = app.get(ShutdownState);
  const instance = app.getHttpAdapter().getInstance() as FastifyInstance;
  observeRequests(instance, {
    logger: logging.root,
    inFlight: app.get(InFlightRequests),
    draining: () => shutdown.draining,
  });
}
