import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { HttpRequest } from '../common/request.js';

/** Who made a key change and from where, for its audit entry. */
export interface AuditContext {
  actorUserId: string | null;
  requestId: string | null;
  ip: string | null;
}

/** The caller (a JWT user: key management takes no API key), the request id and the client's address. */
export const Audit = createParamDecorator((_: unknown, context: ExecutionContext): AuditContext => {
  const request = context.switchToHttp().getRequest<HttpRequest>();
  // Fastify's request.ip follows TRUST_PROXY, so behind a trusted proxy it is the client's.
  return { actorUserId: request.user?.userId ?? null, requestId: request.id, ip: request.ip || null };
});
