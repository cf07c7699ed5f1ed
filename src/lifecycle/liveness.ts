import type { FastifyInstance } from 'fastify';
import { toIsoWithOffset } from '../common/timestamps.js';

export const LIVENESS_PATH = '/health';

/** What the liveness probe answers (spec 2.4): the `HealthResponse` schema of the OpenAPI document. */
const LIVENESS_SCHEMA = {
  type: 'object',
  properties: { status: { type: 'string' }, timestamp: { type: 'string' } },
  required: ['status', 'timestamp'],
} as const;

/**
 * `GET /health/`, answered by Fastify itself rather than through Nest's pipeline: the route is public
 * and touches nothing (no guard, pipe or interceptor has anything to do), and Kubernetes calls it on
 * every pod every few seconds, so it should cost no more than the framework does. Fastify's own hooks
 * still run: request id, access log and metrics, standard headers, CORS, 405 with `Allow`. The OpenAPI
 * operation is LIVENESS_OPERATION, added to the document beside the controllers' (HealthController
 * serves readiness).
 */
export function serveLiveness(instance: FastifyInstance): void {
  instance.get(LIVENESS_PATH, { schema: { response: { 200: LIVENESS_SCHEMA } } }, (_request, reply) => {
    void reply.send({ status: 'ok', timestamp: toIsoWithOffset(new Date()) });
  });
}

/**
 * The liveness operation of the OpenAPI document, declared here with the route (as `@ApiController`
 * would have written it for a controller's): public, no database, so no 503.
 */
export const LIVENESS_OPERATION = {
  operationId: 'getHealth',
  parameters: [],
  responses: {
    '200': {
      description: '',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/HealthResponse' } } },
      headers: { 'Access-Control-Allow-Origin': { $ref: '#/components/headers/Access-Control-Allow-Origin' } },
    },
    '500': { $ref: '#/components/responses/InternalError' },
  },
  summary: 'Liveness: the process answers (the database is not consulted)',
  tags: ['health'],
  security: [],
};
