import { type CallHandler, type ExecutionContext, Inject, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';
import multer, { MulterError } from 'multer';
import type { Observable } from 'rxjs';
import { type ApiError, BadRequestError, FileTooLargeError, ValidationFailedError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { UploadGate } from './upload-gate.js';

export const UPLOAD_FIELD = 'file';

/**
 * Reads a multipart document upload into memory (one `file` plus a few short text fields), within
 * MAX_UPLOAD_BYTES. Other requests pass through untouched for the JSON body parser. Multer's errors
 * come out as our typed errors: an oversized file is a 413, anything else about the form a 400.
 * Each upload holds a place in the UploadGate until its response is over (503 when none is free).
 */
@Injectable()
export class DocumentUploadInterceptor implements NestInterceptor {
  private readonly upload: RequestHandler;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: UploadGate,
  ) {
    this.upload = multer({
      storage: multer.memoryStorage(),
      defParamCharset: 'utf8',
      limits: { fileSize: config.MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
    }).single(UPLOAD_FIELD) as unknown as RequestHandler;
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.is('multipart/form-data')) {
      const response = context.switchToHttp().getResponse<Response>();
      response.once('close', this.gate.enter());
      await new Promise<void>((resolve, reject) => {
        this.upload(request, response, (error?: unknown) => (error ? reject(this.toApiError(error)) : resolve()));
      });
    }
    return next.handle();
  }

  private toApiError(error: unknown): ApiError {
    if (!(error instanceof MulterError)) return new BadRequestError('The multipart body could not be read.');
    switch (error.code) {
      case 'LIMIT_FILE_SIZE':
        return new FileTooLargeError(this.config.MAX_UPLOAD_BYTES);
      case 'LIMIT_UNEXPECTED_FILE':
        return ValidationFailedError.field(UPLOAD_FIELD, `Send the document as one file in the "${UPLOAD_FIELD}" field.`);
      case 'LIMIT_FILE_COUNT':
        return ValidationFailedError.field(UPLOAD_FIELD, 'Send exactly one file.');
      default:
        return new BadRequestError(`The multipart body was refused: ${error.message.toLowerCase()}.`);
    }
  }
}
