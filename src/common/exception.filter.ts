import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ApiError,
  BadRequestError,
  HttpStatusError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
} from './errors.js';
import type { RouteTable } from './route-table.js';
import { DATABASE_UNAVAILABLE_DETAIL, isDatabaseUnavailable } from '../lifecycle/database-faults.js';
import { requestIdOf } from '../observability/request-id.js';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
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
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const error = this.toApiError(exception, request);

    if (response.headersSent) {
      // A stream already started: nothing can be sent but the end of it.
      this.logFailure(exception, request);
      response.end();
      return;
    }
    if (!error) {
      this.logFailure(exception, request);
      response.status(500).json({ detail: INTERNAL_ERROR_DETAIL, request_id: requestIdOf(request) });
      return;
    }
    response.status(error.status).set(error.headers).json(error.body());
  }

  private toApiError(exception: unknown, request: Request): ApiError | null {
    if (exception instanceof ApiError) return exception;
    if (isDatabaseUnavailable(exception)) return new ServiceUnavailableError(DATABASE_UNAVAILABLE_DETAIL);
    if (exception instanceof NotFoundException) return this.routeMiss(request);
    // Nest wraps body-parser's errors in an HttpException and keeps the original as its cause.
    const parserError = ((exception instanceof HttpException ? exception.cause : exception) ?? {}) as BodyParserError;
    if (parserError.type === 'entity.too.large') return new PayloadTooLargeError(parserError.limit ?? this.maxBodyBytes);
    if (parserError.type === 'entity.parse.failed') return new BadRequestError('Malformed JSON in the request body.');
    if (parserError.type) return new HttpStatusError(parserError.status ?? 400, 'The request body could not be read.');
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      // Nest's wrapper around an Express or decoder error, whose message can quote internals (zlib).
      if (exception.cause) return new HttpStatusError(exception.getStatus(), 'The request could not be read.');
      return new HttpStatusError(exception.getStatus(), exception.message);
    }
    return null;
  }

  /** Nest's own NotFoundException means no route matched: 405 when the path exists for other methods. */
  private routeMiss(request: Request): ApiError {
    const allowed = this.routes.methodsFor(request.path);
    return allowed.length > 0 ? new MethodNotAllowedError(request.method, allowed) : new NotFoundError();
  }

  private logFailure(exception: unknown, request: Request): void {
    const stack = exception instanceof Error ? exception.stack : String(exception);
    this.logger.error(`${request.method} ${request.path} failed (request ${requestIdOf(request)}): ${stack}`);
  }
}
