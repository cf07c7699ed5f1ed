import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from './principal.js';

/** A request as our code sees it: Fastify's, with the principal the auth guard attached. */
export type HttpRequest = FastifyRequest & { user?: Principal };
export type HttpReply = FastifyReply;

/** The path of a URL as received, without its query. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
