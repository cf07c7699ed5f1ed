import 'reflect-metadata';
import { type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type FastifyBaseLogger, type FastifyReply, LogController } from 'fastify';
import { AppModule } from './app.module.js';
import { BadRequestError } from './common/errors.js';
import { type AppConfig, configWarnings } from './config/env.schema.js';
import { mountDashboard } from './dashboard/dashboard.js';
import { openDatabaseTarget } from './database/database.js';
import type { DestinationStream } from './observability/logger.js';
import { requestIdFor } from './observability/request-id.js';
import { createLogging } from './observability/setup.js';
import { setUpOpenApi } from './openapi/openapi.js';
import { installFastifySteps, installRequestPipeline } from './request-pipeline.js';
import { parseTrustProxy } from './common/client-address.js';

export interface CreateAppOptions {
  logger?: LoggerService | false;
  /** Where the JSON logs go instead of stdout (tests capture them); given, they are written even with `logger: false`. */
  logStream?: DestinationStream;
}

const UNREADABLE_URL = 'The request could not be read.';

/** Builds the whole service for a configuration: used by main.ts, the tests and the benchmarks. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  const database = await openDatabaseTarget(config);
  const logging = createLogging(config, options);
  for (const warning of configWarnings(config)) logging.root.warn(warning);
  const adapter = new FastifyAdapter({
    // The spec's paths end in `/`; the same path without it works too.
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: config.MAX_BODY_BYTES,
    // A hop count is valid for Fastify (as for Express), though its types list only the other forms.
    trustProxy: parseTrustProxy(config.TRUST_PROXY) as boolean | string,
    // One logger: Fastify's own is our pino root. The access line is ours (observeHttp), not Fastify's,
    // and no request needs a child logger of its own (Fastify would build one per request).
    loggerInstance: logging.fastify,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger: FastifyBaseLogger) => logger,
    genReqId: requestIdFor,
    requestIdHeader: false,
    // A URL Fastify's router cannot decode (a broken %-escape) never reaches Nest's filter.
    frameworkErrors: (_error: Error, _request: unknown, reply: FastifyReply) =>
      void reply.code(400).send(new BadRequestError(UNREADABLE_URL).body()),
  });
  const routes = installFastifySteps(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, database), adapter, {
    bodyParser: false,
    logger: logging.nest,
    abortOnError: false,
  });
  // Every global hook and guard, in the order a request meets them.
  await installRequestPipeline(app, config, logging, routes);
  mountDashboard(app, config.DASHBOARD_DIR);
  setUpOpenApi(app);
  // Nest hands out a Proxy whose `set` trap drops assignments, so `app.close = …` would be a silent
  // no-op (and the embedded store never closed). A proxy of our own adds the store to close().
  const close = async () => {
    await app.close();
    await database.close();
  };
  return new Proxy(app, {
    get: (target, property, receiver) =>
      property === 'close' ? close : (Reflect.get(target, property, receiver) as unknown),
  });
}
