import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { CompositeAuthGuard } from './auth/composite-auth.guard.js';
import { refuseEarly } from './auth/early-refusals.js';
import { PermissionsGuard } from './auth/permissions.guard.js';
import { describeRoutes } from './auth/route-requirements.js';
import { RouteTable } from './common/route-table.js';
import type { HttpRequest } from './common/request.js';
import { BodyValidationPipe } from './common/validation.js';
import type { AppConfig } from './config/env.schema.js';
import { acceptUploads } from './documents/upload.interceptor.js';
import { allowBrowsers } from './http/browser-access.js';
import { GlobalExceptionFilter } from './http/exception.filter.js';
import { readEveryBodyAsJson } from './http/json-body.js';
import { IdempotencyGuard } from './idempotency/idempotency.guard.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { serveLiveness } from './lifecycle/liveness.js';
import { type Logging, observeHttp } from './observability/setup.js';
import { OPENAI_ERROR_DIALECT } from './openai-compat/openai-errors.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { SearchGate } from './retrieval/search-gate.js';

/*
 * The request pipeline, every global hook and guard in one place (docs/ARCHITECTURE.md, "How a request
 * flows through"). A request meets them in this order:
 *
 *  Fastify, before Nest (installFastifySteps)
 *   1. the route table (405 vs 404), the liveness probe (answered here, nothing below runs for it)
 *  Fastify hooks (installRequestPipeline)
 *   2. onRequest: the HTTP observer (request id, in flight, metrics and access log at the end)
 *   3. onRequest: helmet's headers and CORS
 *   4. onRequest: the early refusals (an address over its limit, or presenting bad credentials)
 *   5. the body: JSON (preParsing, MAX_BODY_BYTES; installed with Fastify's steps) or multipart (uploads)
 *  Nest's global guards, in this order (each route's requirement resolved once, at start-up)
 *   6. CompositeAuthGuard: who is calling (401), the principal on the request
 *   7. RateLimitGuard: per principal and organization (429, RateLimit-* headers)
 *   8. PermissionsGuard: the key's scope, then admin rights (403), after the request was counted
 *   9. IdempotencyGuard: claims an Idempotency-Key, or replays its answer
 *  Then the validation pipe, the route, the exception filter (which answers every failure), and
 *  10. onSend: the answer of a claimed Idempotency-Key stored before it is sent.
 *  11. onResponse: the caller's organization noted as active (SearchGate leaves it a core).
 */

/** Fastify's own steps, on its instance before Nest is created: returns the route table the filter needs. */
export function installFastifySteps(http: FastifyInstance): RouteTable {
  const routes = RouteTable.listen(http);
  readEveryBodyAsJson(http);
  serveLiveness(http);
  return routes;
}

/** Nest's hooks, guards, pipe and filter, in the order above. Call before the application's init. */
export async function installRequestPipeline(
  app: INestApplication,
  config: AppConfig,
  logging: Logging,
  routes: RouteTable,
): Promise<void> {
  observeHttp(app, logging);
  allowBrowsers(app, config);
  const errors = new GlobalExceptionFilter(routes, config.MAX_BODY_BYTES, [OPENAI_ERROR_DIALECT]);
  // Every route's requirement and address rule, read from its decorators once, for the hook and the guards.
  describeRoutes(app);
  refuseEarly(app, (error, request, reply) => errors.answer(error, request, reply));
  await acceptUploads(app, config);
  const idempotency = app.get(IdempotencyService);
  const http = app.getHttpAdapter().getInstance() as FastifyInstance;
  http.addHook('onSend', idempotency.settleOnSend);
  // Any authenticated request, reads included, makes its organization one a flooder leaves a core to.
  const gate = app.get(SearchGate);
  http.addHook('onResponse', (request: HttpRequest, _reply, done) => {
    if (request.user) gate.noteActivity(request.user.organizationId);
    done();
  });
  app.useGlobalGuards(
    app.get(CompositeAuthGuard),
    app.get(RateLimitGuard),
    app.get(PermissionsGuard),
    app.get(IdempotencyGuard),
  );
  app.useGlobalPipes(new BodyValidationPipe());
  app.useGlobalFilters(errors);
}
