import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import {
  ApiError,
  HttpStatusError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
} from '../common/errors.js';
import { type HttpReply, type HttpRequest, pathOf } from '../common/request.js';
import type { RouteTable } from '../common/route-table.js';
import { DATABASE_UNAVAILABLE_DETAIL, isDatabaseUnavailable } from '../lifecycle/database-faults.js';

/** What Fastify throws before a handler runs (body limit, unreadable body, ...): a code and a status. */
interface FastifyError {
  code?: string;
  statusCode?: number;
}

/**
 * How some routes add to the error body for clients that expect another API's errors (the
 * OpenAI-compatible routes add OpenAI's `error` object); the body stays ours, fields are only added.
 */
export interface ErrorDialect {
  appliesTo(path: string): boolean;
  render(status: number, body: Record<string, unknown>): Record<string, unknown>;
}

export const INTERNAL_ERROR_DETAIL = 'A server error occurred. It is transient: retry with exponential back-off.';

/**
 * The one place that turns any failure into the documented JSON body. Unknown errors become a generic
 * 500; their message and stack go only to the log.
 */
@Catch()
export class GlobalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  constructor(
    private readonly routes: RouteTable,
    private readonly maxBodyBytes: number,
    private readonly dialects: ErrorDialect[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<HttpRequest>();
    const reply = host.switchToHttp().getResponse<HttpReply>();
    const error = this.toApiError(exception, request);

    // The client went first, and its work was dropped (a search waiting for its turn, an answer cut):
    // nobody to answer, and nothing failed here worth an error line (a flood of hang-ups would be one each).
    if (isAbort(exception) && reply.raw.destroyed) return;
    if (reply.sent || reply.raw.headersSent) {
      // A stream already started: nothing can be sent but the end of it.
      this.logFailure(exception, request);
      if (!reply.raw.writableEnded) reply.raw.end();
      return;
    }
    if (!error) {
      this.logFailure(exception, request);
      void reply
        .status(500)
        .send(this.inDialect(request, 500, { detail: INTERNAL_ERROR_DETAIL, request_id: request.id }));
      return;
    }
    this.answer(error, request, reply);
  }

  /** Sends the documented answer for `error` (also used by hooks that refuse before Nest runs). */
  answer(error: ApiError, request: HttpRequest, reply: HttpReply): void {
    void reply
      .status(error.status)
      .headers(error.headers)
      .send(error.verbatim ? error.body() : this.inDialect(request, error.status, error.body()));
  }

  private inDialect(request: HttpRequest, status: number, body: Record<string, unknown>): Record<string, unknown> {
    const path = pathOf(request.url);
    const dialect = this.dialects.find((candidate) => candidate.appliesTo(path));
    return dialect ? dialect.render(status, body) : body;
  }

  private toApiError(exception: unknown, request: HttpRequest): ApiError | null {
    if (exception instanceof ApiError) return exception;
    if (isDatabaseUnavailable(exception)) return new ServiceUnavailableError(DATABASE_UNAVAILABLE_DETAIL);
    if (exception instanceof NotFoundException) return this.routeMiss(request);
    // Nest wraps what Fastify throws before a handler (body limit, ...) in an HttpException, as its cause.
    const fastifyError = ((exception instanceof HttpException ? exception.cause : exception) ?? {}) as FastifyError;
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLargeError(this.maxBodyBytes);
    if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      // A body Fastify could not read (its own errors, or zlib's for a corrupt gzip body, to which it
      // gives a 400): their messages can quote internals, so say what failed, not how.
      return new HttpStatusError(fastifyError.statusCode, 'The request could not be read.');
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      // Nest's wrapper around a decoder error (a bad %-escape in the URL), whose message can quote internals.
      if (exception.cause) return new HttpStatusError(exception.getStatus(), 'The request could not be read.');
      return new HttpStatusError(exception.getStatus(), exception.message);
    }
    return null;
  }

  /** Nest's own NotFoundException means no route matched: 405 when the path exists for other methods. */
  private routeMiss(request: HttpRequest): ApiError {
    const allowed = this.routes.methodsFor(pathOf(request.url));
    return allowed.length > 0 ? new MethodNotAllowedError(request.method, allowed) : new NotFoundError();
  }

  private logFailure(exception: unknown, request: HttpRequest): void {
    const stack = exception instanceof Error ? (exception.stack ?? String(exception)) : String(exception);
    this.logger.error(`${request.method} ${pathOf(request.url)} failed (request ${request.id}): ${stack}`);
  }
}

/** An AbortSignal's reason, as `throwIfAborted` and SearchGate reject with (a DOMException named so). */
const isAbort = (exception: unknown): boolean => (exception as { name?: unknown } | null)?.name === 'AbortError';
