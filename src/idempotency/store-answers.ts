import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { IdempotencyService } from './idempotency.service.js';

/**
 * Stores the answer of each request that holds an idempotency key before it is sent, so a client that
 * has its answer and retries anyway is replayed, never told "in progress". A streamed query is stored
 * by its controller (a hijacked reply skips this hook).
 */
export function storeIdempotentAnswers(app: INestApplication): void {
  const idempotency = app.get(IdempotencyService);
  const instance = app.getHttpAdapter().getInstance() as FastifyInstance;
  // Callback style: most answers hold no key and pass straight through, without a promise.
  instance.addHook('onSend', (request, reply, payload, done) => {
    if (!idempotency.holds(request)) {
      done(null, payload);
      return;
    }
    const send = () => done(null, payload);
    // settle never fails the answer (it logs a storage failure); sent either way.
    void idempotency.settle(request, reply.statusCode, reply.getHeaders(), storable(payload)).then(send, send);
  });
}

/** The body as text; null for a streamed payload, which cannot be stored. */
function storable(payload: unknown): string | null {
  if (payload === undefined || payload === null) return '';
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return payload.toString();
  return null;
}
