import 'reflect-metadata';
import { type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import type { IncomingMessage } from 'node:http';
import { AppModule } from './app.module.js';
import { GlobalExceptionFilter } from './common/exception.filter.js';
import { RouteTable } from './common/route-table.js';
import { BodyValidationPipe } from './common/validation.js';
import { type AppConfig, configWarnings } from './config/env.schema.js';
import { mountDashboard } from './dashboard/dashboard.js';
import { openDatabaseTarget } from './database/database.js';
import { allowBrowsers } from './http/browser-access.js';
import type { DestinationStream } from './observability/logger.js';
import { createLogging, observeHttp } from './observability/setup.js';
import { setUpOpenApi } from './openapi/openapi.js';
import { parseTrustProxy } from './rate-limit/client-address.js';

function isMultipart(request: IncomingMessage): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
}

export interface CreateAppOptions {
  logger?: LoggerService | false;
  /** Where the JSON logs go instead of stdout (tests capture them); given, they are written even with `logger: false`. */
  logStream?: DestinationStream;
}

/** Builds the whole service for a configuration: used by main.ts, the tests and the benchmarks. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  const database = await openDatabaseTarget(config);
  const logging = createLogging(config, options);
  for (const warning of configWarnings(config)) logging.root.warn(warning);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, database), {
    bodyParser: false,
    logger: logging.nest,
    abortOnError: false,
  });
  const http = app.getHttpAdapter().getInstance() as express.Express;
  http.disable('x-powered-by');
  http.set('etag', false);
  http.set('trust proxy', parseTrustProxy(config.TRUST_PROXY));
  observeHttp(app, logging);
  allowBrowsers(app, config);
  // JSON only as a Nest middleware, so its parse and size errors reach the global filter. Every body
  // but a multipart upload is read as JSON, whatever its Content-Type: `curl -d` says form-urlencoded.
  app.use(express.json({ limit: config.MAX_BODY_BYTES, strict: false, type: (request) => !isMultipart(request) }));
  mountDashboard(app, config.DASHBOARD_DIR);
  app.useGlobalFilters(new GlobalExceptionFilter(new RouteTable(http), config.MAX_BODY_BYTES));
  app.useGlobalPipes(new BodyValidationPipe());
  setUpOpenApi(app);
  // Nest hands out a Proxy whose `set` trap drops assignments, so `app.close = …` would be a silent
  // no-op (and the embedded store never closed). A proxy of our own adds the store to close().
  const close = async () => {
    await app.close();
    await database.close();
  };
  return new Proxy(app, { get: (target, property, receiver) => (property === 'close' ? close : Reflect.get(target, property, receiver)) });
}
