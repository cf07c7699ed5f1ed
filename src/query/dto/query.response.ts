import { ApiProperty } from '@nestjs/swagger';
import { DEFAULT_CHUNKING } from '../../documents/chunker.js';
import { metadataProperty } from '../../documents/dto/document.response.js';
import { TITLE_MAX } from '../../documents/dto/document.dto.js';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';
import { ANSWER_MAX, CREDITS } from '../../openapi/limits.js';
import { integerSchema } from '../../common/validation.js';
import { PDF_MAX_PAGES } from '../../documents/extraction/pdf-pages.js';
import { MAX_TOP_K } from './query.dto.js';

/** An offset into a document's content (at most its length, well within an int32). */
const OFFSET = { ...integerSchema(0, 2 ** 31 - 1), nullable: true };

/** A passage is at most DEFAULT_CHUNKING.maxChars; ts_headline's `**` marks and ` … ` add less than that again. */
const SNIPPET_MAX = DEFAULT_CHUNKING.maxChars * 2;

/** A passage the answer drew on, as `presentSource` returns it. */
export class SourceResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  document_id: string;

  @ApiProperty({ type: 'string', format: 'uuid', description: 'The passage within the document.' })
  chunk_id: string;

  @ApiProperty({ type: 'string', maxLength: TITLE_MAX, description: "The document's title." })
  title: string;

  @ApiProperty({ type: 'string', maxLength: SNIPPET_MAX, description: 'The passage, shortened.' })
  snippet: string;

  @ApiProperty({ type: 'number', description: 'Relevance (higher is better), to 4 decimal places.', example: 7.1234 })
  score: number;

  @ApiProperty(metadataProperty("The document's metadata."))
  metadata: Record<string, string | number>;

  @ApiProperty({
    ...OFFSET,
    description:
      "Where the passage starts in the document's stored `content` (UTF-16 code units, as JavaScript indexes " +
      'strings): `content.slice(start, end)` is the passage, its white space as stored. Null for passages ' +
      'stored before offsets were kept (re-upload the document to locate them).',
    example: 1204,
  })
  start: number | null;

  @ApiProperty({ ...OFFSET, description: 'Where the passage ends (exclusive); see `start`.', example: 2311 })
  end: number | null;

  @ApiProperty({
    ...integerSchema(1, PDF_MAX_PAGES),
    nullable: true,
    description: 'The 1-based PDF page the passage starts on; null for documents that are not PDFs.',
    example: 3,
  })
  page: number | null;
}

/** `POST /v1/query/` as JSON. */
export class QueryResponse {
  @ApiProperty({ type: 'string', maxLength: ANSWER_MAX, description: 'The answer, drawn from the sources.' })
  answer: string;

  @ApiProperty({
    type: SourceResponse,
    isArray: true,
    maxItems: MAX_TOP_K,
    description: 'Up to `top_k`, best first, from distinct documents.',
  })
  sources: SourceResponse[];

  @ApiProperty({
    ...SLUG_SCHEMA,
    nullable: true,
    description: "The public domain searched, or null for the organization's private documents.",
    example: 'medicine',
  })
  domain: string | null;

  @ApiProperty({ ...CREDITS, description: 'Credits this query cost.', example: 1 })
  credits_used: number;

  @ApiProperty({ ...CREDITS, description: 'Credits left in the current period.', example: 999 })
  credits_remaining: number;
}

/** One source as the examples of the answering routes show it. */
export const EXAMPLE_SOURCE = {
  document_id: '0d8f6a52-6a0e-4f7a-9a43-1f2b3c4d5e6f',
  chunk_id: '5b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
  title: 'Rotating API keys',
  snippet: 'Rotate a key with **POST** …/rotate/ …',
  score: 7.1234,
  metadata: {},
  start: 1204,
  end: 1890,
  page: null,
};
