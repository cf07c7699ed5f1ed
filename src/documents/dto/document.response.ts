import { ApiProperty, type ApiPropertyOptions, ApiPropertyOptional } from '@nestjs/swagger';
import { PageOf } from '../../openapi/page.response.js';
import { UploadsBusyError, ValidationFailedError } from '../../common/errors.js';
import { TITLE_MAX } from './document.dto.js';
import { BATCH_MAX } from './document-batch.dto.js';
import { BODY_TEXT_MAX, integerSchema } from '../../common/validation.js';
import { DOCUMENT_TEXT_MAX } from '../../openapi/limits.js';
import { METADATA_OBJECT } from './metadata.field.js';

/** A flat JSON object of strings and numbers (document metadata, also on every source). */
export const metadataProperty = (description: string): ApiPropertyOptions => ({
  ...METADATA_OBJECT,
  example: { source: 'handbook', year: 2026 },
  description,
});

/** A document as `presentDocument` returns it (in lists and on creation: without its text). */
export class DocumentResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: TITLE_MAX, example: 'Rotating API keys' })
  title: string;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: "The collection it belongs to; null for a public domain's document.",
  })
  collection_id: string | null;

  @ApiProperty(metadataProperty('A flat object of strings and numbers; `{}` when none was given.'))
  metadata: Record<string, string | number>;

  @ApiProperty({
    type: 'string',
    enum: ['text/plain', 'text/markdown', 'text/html', 'application/pdf'],
    description: 'What the text was extracted from (JSON bodies: text/plain).',
  })
  content_type: string;

  @ApiProperty({
    ...integerSchema(0, DOCUMENT_TEXT_MAX),
    description: 'Size of the upload, or of the JSON `content` in UTF-8.',
  })
  size_bytes: number;

  @ApiProperty({
    ...integerSchema(0, DOCUMENT_TEXT_MAX),
    description: 'Passages the text was split into for retrieval.',
  })
  chunk_count: number;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}

/** One document by id: with its (extracted) text. */
export class DocumentWithContentResponse extends DocumentResponse {
  @ApiProperty({
    type: 'string',
    maxLength: DOCUMENT_TEXT_MAX,
    description: 'The stored text (for uploads, the text extracted from the file).',
  })
  content: string;
}

export const DocumentPage = PageOf(DocumentResponse, 'DocumentPage');

/** The multipart form of a document upload (the JSON form is `CreateDocumentDto`). */
export class DocumentUploadForm {
  @ApiProperty({
    type: 'string',
    format: 'binary',
    // Bytes: MAX_UPLOAD_BYTES' default.
    maxLength: DOCUMENT_TEXT_MAX,
    description:
      'The document: plain text (.txt), Markdown (.md), HTML (.html) or PDF with a text layer (.pdf), within MAX_UPLOAD_BYTES (10 MB by default).',
  })
  file: unknown;

  @ApiPropertyOptional({ type: 'string', maxLength: TITLE_MAX, description: "Defaults to the file's name." })
  title?: string;

  @ApiPropertyOptional({
    type: 'string',
    maxLength: BODY_TEXT_MAX,
    description: 'A flat JSON object of strings and numbers, sent as a string field.',
    example: '{"source": "wiki"}',
  })
  metadata?: string;
}

/** The multipart form of an upload into the private knowledge base: with the collection it goes into. */
export class PrivateDocumentUploadForm extends DocumentUploadForm {
  @ApiPropertyOptional({
    type: 'string',
    maxLength: 100,
    description:
      "The collection to store into. Default: `default`, or for an API key limited to collections, the first of its own. Unknown or out of the key's reach: 404.",
  })
  collection_id?: string;
}

/** A document upload's errors: the body (or its file) is refused, or too large. */
export const UPLOAD_ERRORS = {
  400: {
    description:
      'A JSON field is missing or invalid; or the file is empty, binary, of an unsupported type, not valid text, a PDF without a text layer, ' +
      'HTML nested over 512 deep, a PDF that decompresses to over 64 MB, or takes longer (EXTRACTION_TIMEOUT_MS) or more memory (EXTRACTION_MEMORY_MB) to read than allowed.',
    examples: ['validation'],
    bodies: { emptyFile: ValidationFailedError.field('file', 'The submitted file is empty.').body() },
  },
  413: {
    description: 'The JSON body is over MAX_BODY_BYTES, or the file over MAX_UPLOAD_BYTES.',
    examples: ['payloadTooLarge', 'fileTooLarge'],
  },
  503: {
    description:
      'MAX_UPLOADS_IN_FLIGHT uploads are already being read (retry after `Retry-After`), or the database is unreachable.',
    examples: ['unavailable'],
    bodies: { uploadsBusy: new UploadsBusyError(4).body() },
  },
} as const;

export const UPLOAD_BODY_DESCRIPTION =
  'JSON `{title, content, metadata?}`, or a multipart upload: `file` (text, Markdown, HTML or PDF), optional `title` (default: the file name) and `metadata` (a JSON object as a string).';

/** `POST /v1/documents/batch/`: the stored documents, in the order given. */
export class DocumentBatchResponse {
  @ApiProperty({ type: DocumentResponse, isArray: true, minItems: 1, maxItems: BATCH_MAX })
  results: DocumentResponse[];
}
