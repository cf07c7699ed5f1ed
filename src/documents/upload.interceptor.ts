import { finished } from 'node:stream';
import multipart from '@fastify/multipart';
import {
  type CallHandler,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  type INestApplication,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Observable } from 'rxjs';
import {
  ApiError,
  BadRequestError,
  FileTooLargeError,
  ServiceUnavailableError,
  ValidationFailedError,
} from '../common/errors.js';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { REQUIRED } from '../common/validation.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import type { UploadedFile } from './extraction/extract-upload.js';
import { SpoolError, SpoolFile } from './spool-file.js';
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
 * Reads a multipart document upload (one `file` plus a few short text fields) and hands them on as the
 * body (as a JSON body would be) and the file (`@UploadedDocument()`). Other requests pass through.
 * The file is streamed to a spool file as it arrives (see spool-file.ts), never held whole in memory.
 * @fastify/multipart's errors come out as our typed errors: an oversized file is a 413, anything else
 * about the form a 400. Each upload holds a place in the UploadGate until its response is over (503,
 * before the body is read, when none is free).
 */
@Injectable()
export class DocumentUploadInterceptor implements NestInterceptor {
  private readonly logger = new Logger(DocumentUploadInterceptor.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: UploadGate,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<UploadRequest>();
    if (request.isMultipart()) {
      const leave = this.gate.enter();
      const spool = new SpoolFile();
      // The response's end (sent, failed or abandoned) frees the place and removes the spooled file.
      // finished() also calls back for a client that went away before this line ('close' would not).
      finished(context.switchToHttp().getResponse<HttpReply>().raw, () => {
        leave();
        spool.remove().catch((error: unknown) => this.logger.warn(`spooled upload not removed: ${String(error)}`));
      });
      try {
        const { file, body } = await this.read(request, spool);
        request[UPLOAD] = file;
        request.body = body;
      } catch (error) {
        throw this.toApiError(error);
      }
    }
    return next.handle();
  }

  private async read(
    request: UploadRequest,
    spool: SpoolFile,
  ): Promise<{ file?: UploadedFile; body: Record<string, string> }> {
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
      const size = await spool.write(part.file);
      // At the size limit busboy truncates the file and the 413 would only come with the next part.
      if (part.file.truncated) throw new FileTooLargeError(this.config.MAX_UPLOAD_BYTES);
      file = { originalname: part.filename, mimetype: part.mimetype, size, path: spool.path };
    }
    // A form without its file is not a JSON body either: name the part that is missing, not `content`.
    if (!file) throw ValidationFailedError.field(UPLOAD_FIELD, REQUIRED);
    return { file, body };
  }

  private toApiError(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof SpoolError) {
      this.logger.warn(`upload not spooled: ${error.message}`);
      return new ServiceUnavailableError('The upload could not be stored for reading; retry it later.');
    }
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
