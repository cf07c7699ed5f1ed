import multipart from '@fastify/multipart';
import {
  type CallHandler,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Observable } from 'rxjs';
import { type ApiError, BadRequestError, FileTooLargeError, ValidationFailedError } from '../common/errors.js';
import type { HttpReply, HttpRequest } from '../common/http.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import type { UploadedFile } from './extraction/extract-upload.js';
import { UploadGate } from './upload-gate.js';

export const UPLOAD_FIELD = 'file';

/** Multipart parsing for the whole service, within MAX_UPLOAD_BYTES per file and a few short fields. */
export async function acceptUploads(app: INestApplication, config: AppConfig): Promise<void> {
  await (app as NestFastifyApplication).register(multipart, {
    defCharset: 'utf8',
    limits: { fileSize: config.MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  });
}

// Not `request.file`: @fastify/multipart puts a method there.
const UPLOAD = Symbol('upload');
type UploadRequest = HttpRequest & { [UPLOAD]?: UploadedFile; body: unknown };

/** The file of a multipart upload read by DocumentUploadInterceptor; undefined for a JSON body. */
export const UploadedDocument = createParamDecorator(
  (_: unknown, context: ExecutionContext): UploadedFile | undefined =>
    context.switchToHttp().getRequest<UploadRequest>()[UPLOAD],
);

/**
 * Reads a multipart document upload into memory (one `file` plus a few short text fields) and hands
 * them on as the body (as a JSON body would be) and the file (`@UploadedDocument()`). Other requests pass through.
 * @fastify/multipart's errors come out as our typed errors: an oversized file is a 413, anything else
 * about the form a 400. Each upload holds a place in the UploadGate until its response is over (503,
 * before the body is read, when none is free).
 */
@Injectable()
export class DocumentUploadInterceptor implements NestInterceptor {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: UploadGate,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<UploadRequest>();
    if (request.isMultipart()) {
      context.switchToHttp().getResponse<HttpReply>().raw.once('close', this.gate.enter());
      try {
        const { file, body } = await this.read(request);
        request[UPLOAD] = file;
        request.body = body;
      } catch (error) {
        throw this.toApiError(error);
      }
    }
    return next.handle();
  }

  private async read(request: UploadRequest): Promise<{ file?: UploadedFile; body: Record<string, string> }> {
    const body: Record<string, string> = {};
    let file: UploadedFile | undefined;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        body[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== UPLOAD_FIELD) {
        throw ValidationFailedError.field(
          UPLOAD_FIELD,
          `Send the document as one file in the "${UPLOAD_FIELD}" field.`,
        );
      }
      const buffer = await part.toBuffer();
      file = { originalname: part.filename, mimetype: part.mimetype, size: buffer.length, buffer };
    }
    return { file, body };
  }

  private toApiError(error: unknown): ApiError {
    if (error instanceof ValidationFailedError) return error;
    switch ((error as { code?: string }).code) {
      case 'FST_REQ_FILE_TOO_LARGE':
        return new FileTooLargeError(this.config.MAX_UPLOAD_BYTES);
      case 'FST_FILES_LIMIT':
        return ValidationFailedError.field(UPLOAD_FIELD, 'Send exactly one file.');
      case 'FST_PARTS_LIMIT':
      case 'FST_FIELDS_LIMIT':
        return new BadRequestError('The multipart body was refused: too many parts or fields.');
      case 'FST_PROTO_VIOLATION':
        return new BadRequestError('The multipart body was refused: a field has a forbidden name.');
      default:
        return new BadRequestError('The multipart body could not be read.');
    }
  }
}
