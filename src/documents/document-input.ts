import { Inject, Injectable } from '@nestjs/common';
import { type FieldErrors, ValidationFailedError } from '../common/errors.js';
import { BodyValidationPipe } from '../common/validation.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import type { IndexedChunk } from '../retrieval/search-index.repository.js';
import { CreateDocumentDto, TITLE_MAX, UploadFieldsDto } from './dto/document.dto.js';
import { metadataProblem } from './dto/metadata.field.js';
import { DocumentExtractor } from './extraction/document-extractor.js';
import { type UploadedFile, uploadContentType } from './extraction/extract-upload.js';

/** A validated document, ready to chunk and store. */
export interface NewDocument {
  title: string;
  content: string;
  metadata: Record<string, string | number>;
  contentType: string;
  sizeBytes: number;
  /** The content's chunks, when already made (off the event loop); else the service makes them. */
  chunks?: IndexedChunk[];
}

/**
 * An upload whose file was accepted but could not be read (no text, unreadable, too slow or too big to
 * extract): the same 400 naming `file`, with the title the document would have had, so that the
 * organization's `document.failed` event can name it.
 */
export class UnreadableDocumentError extends ValidationFailedError {
  readonly reason: string;
  constructor(
    readonly title: string,
    refusal: ValidationFailedError,
  ) {
    super(refusal.fields);
    this.reason = Object.values(refusal.fields)[0]?.[0] ?? refusal.message;
  }
}

/**
 * Turns either form of `POST .../documents/` into a NewDocument: a JSON `{title, content, metadata?}`
 * or a multipart upload (`file`, optional `title` defaulting to the file name, optional `metadata` as
 * a JSON string).
 */
@Injectable()
export class DocumentInputReader {
  private readonly validation = new BodyValidationPipe();

  constructor(
    private readonly extractor: DocumentExtractor,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async read(body: unknown, file: UploadedFile | undefined): Promise<NewDocument> {
    return file ? this.fromUpload(body, file) : this.fromJson(body);
  }

  /**
   * The documents of a batch (`documents`, already checked to be a list), or a 400 naming each bad one
   * (`documents[3].content`): the first in `detail`, all of them in `fields`.
   */
  async readBatch(documents: readonly unknown[]): Promise<NewDocument[]> {
    const problems: FieldErrors = {};
    const results = await Promise.all(
      documents.map(async (document, i) => {
        try {
          if (typeof document !== 'object' || document === null || Array.isArray(document))
            throw ValidationFailedError.field('body', 'Expected a JSON object.');
          return await this.fromJson(document);
        } catch (error) {
          if (!(error instanceof ValidationFailedError)) throw error;
          for (const [field, messages] of Object.entries(error.fields))
            problems[field === 'body' ? `documents[${i}]` : `documents[${i}].${field}`] = messages;
          return null;
        }
      }),
    );
    if (Object.keys(problems).length > 0) throw new ValidationFailedError(sortedByDocument(problems));
    return results as NewDocument[];
  }

  private async fromJson(body: unknown): Promise<NewDocument> {
    const dto = (await this.validation.transform(body, {
      type: 'body',
      metatype: CreateDocumentDto,
    })) as CreateDocumentDto;
    this.checkMetadataSize(dto.metadata);
    return {
      title: dto.title,
      content: dto.content,
      metadata: dto.metadata ?? {},
      contentType: 'text/plain',
      sizeBytes: Buffer.byteLength(dto.content),
      chunks: await this.extractor.chunk(dto.content),
    };
  }

  private async fromUpload(body: unknown, file: UploadedFile): Promise<NewDocument> {
    const fields = (await this.validation.transform(body, {
      type: 'body',
      metatype: UploadFieldsDto,
    })) as UploadFieldsDto;
    const metadata = this.parseMetadata(fields.metadata);
    const contentType = uploadContentType(file);
    const title =
      fields.title ??
      (file.originalname
        .replace(/\u0000/g, '')
        .trim()
        .slice(0, TITLE_MAX) ||
        'Untitled');
    try {
      const { text, chunks } = await this.extractor.extract(file.path, contentType);
      return { title, content: text, metadata, contentType, sizeBytes: file.size, chunks };
    } catch (error) {
      if (error instanceof ValidationFailedError) throw new UnreadableDocumentError(title, error);
      throw error;
    }
  }

  private parseMetadata(raw: string | undefined): Record<string, string | number> {
    if (raw === undefined || raw.trim() === '') return {};
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw ValidationFailedError.field(
        'metadata',
        'Must be a JSON object (sent as a string field), e.g. {"source": "wiki"}.',
      );
    }
    const problem = metadataProblem(value);
    if (problem) throw ValidationFailedError.field('metadata', problem);
    this.checkMetadataSize(value);
    return (value ?? {}) as Record<string, string | number>;
  }

  /** DOCUMENT_METADATA_MAX_BYTES: a search's filter reads the metadata of every candidate document. */
  private checkMetadataSize(metadata: unknown): void {
    const limit = this.config.DOCUMENT_METADATA_MAX_BYTES;
    if (metadata && Buffer.byteLength(JSON.stringify(metadata)) > limit)
      throw ValidationFailedError.field('metadata', `Ensure this object takes no more than ${limit} bytes as JSON.`);
  }
}

/** Problems found in parallel, listed in the documents' order (the first one is the 400's `detail`). */
function sortedByDocument(problems: FieldErrors): FieldErrors {
  const index = (field: string) => Number(/^documents\[(\d+)\]/.exec(field)?.[1]);
  return Object.fromEntries(Object.entries(problems).sort(([a], [b]) => index(a) - index(b)));
}
