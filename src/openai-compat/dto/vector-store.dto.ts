import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  AcceptsUnknownFields,
  AsParsed,
  fieldRule,
  IntegerField,
  REQUIRED,
  StringField,
  unstorableText,
} from '../../common/validation.js';
import { METADATA_MESSAGE, metadataProblem } from '../../documents/dto/metadata.field.js';
import { MAX_QUERY_CHARACTERS } from '../../query/dto/query.dto.js';

export const SEARCH_RESULTS_MAX = 50;
const FILE_IDS_MAX = 100;

/** OpenAI's documented bounds of a vector store's `metadata` and a file's `attributes`. */
export const ATTRIBUTES_MAX_KEYS = 16;
export const ATTRIBUTE_KEY_MAX = 64;
export const ATTRIBUTE_VALUE_MAX = 512;

/** Null when `value` is acceptable OpenAI `metadata` / `attributes`, else the reason. */
export function attributesProblem(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return METADATA_MESSAGE;
  const entries = Object.entries(value);
  if (entries.length > ATTRIBUTES_MAX_KEYS) return `Ensure this object has no more than ${ATTRIBUTES_MAX_KEYS} keys.`;
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > ATTRIBUTE_KEY_MAX)
      return `Keys must be 1 to ${ATTRIBUTE_KEY_MAX} characters long.`;
    if (typeof item === 'string' && item.length > ATTRIBUTE_VALUE_MAX)
      return `Ensure each value has no more than ${ATTRIBUTE_VALUE_MAX} characters.`;
  }
  // The rest (value types, unstorable text) as for a document's metadata.
  return metadataProblem(value);
}

/**
 * OpenAI's `metadata` / `attributes`: a flat object of strings and numbers (booleans are not kept here),
 * at most 16 keys of 64 characters, string values of 512; DOCUMENT_METADATA_MAX_BYTES bounds the whole.
 */
function AttributesField(name: string, description: string) {
  const rule = fieldRule(name, attributesProblem, {
    type: 'object',
    maxProperties: ATTRIBUTES_MAX_KEYS,
    additionalProperties: { oneOf: [{ type: 'string', maxLength: ATTRIBUTE_VALUE_MAX }, { type: 'number' }] },
    nullable: true,
    selfRequired: false,
    description,
    example: { customer: 'acme' },
  });
  return (target: object, property: string) => {
    AsParsed()(target, property);
    rule(target, property);
  };
}

/** `POST /v1/vector_stores`. OpenAI's other fields (`expires_after`, `chunking_strategy`) are accepted and ignored. */
@AcceptsUnknownFields()
export class CreateVectorStoreDto {
  @ApiPropertyOptional({
    type: 'string',
    maxLength: 100,
    description: 'The collection\'s name (unique in the organization: 409). Default: "Vector store <random>".',
    example: 'Support tickets',
  })
  @StringField({ optional: true, max: 100 })
  name?: string | null;

  @ApiPropertyOptional({ type: 'string', maxLength: 2000, nullable: true, example: 'Tickets of 2026' })
  @StringField({ optional: true, max: 2000 })
  description?: string | null;

  @AttributesField('vectorStoreMetadata', "The collection's metadata: a flat object of strings and numbers.")
  metadata?: Record<string, string | number> | null;

  @fieldRule(
    'fileIds',
    (value) => {
      if (value === undefined || value === null) return null;
      if (!Array.isArray(value) || !value.every((id) => typeof id === 'string')) return 'Expected a list of file ids.';
      if (value.length > FILE_IDS_MAX) return `Ensure this field has no more than ${FILE_IDS_MAX} elements.`;
      return null;
    },
    {
      type: 'array',
      items: { type: 'string', maxLength: 100 },
      maxItems: FILE_IDS_MAX,
      required: false,
      description: 'Files to attach at once (each extracted and indexed as `POST …/files` does).',
    },
  )
  file_ids?: string[];
}

/** `POST /v1/vector_stores/{id}`. */
@AcceptsUnknownFields()
export class UpdateVectorStoreDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 100, example: 'Support tickets 2026' })
  @StringField({ optional: true, max: 100, notNull: true })
  name?: string;

  @AttributesField('vectorStoreMetadata', "The collection's metadata: a flat object of strings and numbers.")
  metadata?: Record<string, string | number> | null;
}

/** `POST /v1/vector_stores/{id}/files`. OpenAI's `chunking_strategy` is accepted and ignored. */
@AcceptsUnknownFields()
export class AttachFileDto {
  @ApiProperty({ type: 'string', maxLength: 100, description: 'A file of `POST /v1/files`.' })
  @StringField({ max: 100 })
  file_id: string;

  @AttributesField(
    'fileAttributes',
    "Become the document's metadata: a flat object of strings and numbers, filtered on by the search's `filters`.",
  )
  attributes?: Record<string, string | number> | null;
}

export const SEARCH_QUERIES_MAX = 10;

/** `query`: a string, or OpenAI's list of strings (joined into one question); within MAX_QUERY_CHARACTERS. */
function searchQueryProblem(value: unknown): string | null {
  if (value === undefined || value === null) return REQUIRED;
  const parts = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === 'string'))
    return 'Expected a string or a list of strings.';
  if (parts.length === 0) return 'This list may not be empty.';
  if (parts.length > SEARCH_QUERIES_MAX) return `Ensure this list has no more than ${SEARCH_QUERIES_MAX} queries.`;
  for (const part of parts) {
    const unstorable = unstorableText(part);
    if (unstorable) return unstorable;
  }
  const joined = searchQueryText(parts);
  if (joined === '') return REQUIRED;
  if (joined.length > MAX_QUERY_CHARACTERS)
    return `Ensure this field has no more than ${MAX_QUERY_CHARACTERS} characters.`;
  return null;
}

/** The question a `query` asks: its strings, trimmed, the blank ones left out, joined by a space. */
export function searchQueryText(query: string | string[]): string {
  return (typeof query === 'string' ? [query] : query)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join(' ');
}

/** Null when `value` is acceptable `ranking_options`, else what is wrong. */
function rankingOptionsProblem(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return 'Expected an object {ranker?, score_threshold?}.';
  const threshold = (value as { score_threshold?: unknown }).score_threshold;
  if (
    threshold !== undefined &&
    threshold !== null &&
    !(typeof threshold === 'number' && Number.isFinite(threshold) && threshold >= 0)
  )
    return 'score_threshold must be a number of 0 or more.';
  return null;
}

/** `POST /v1/vector_stores/{id}/search`. OpenAI's `rewrite_query` and `ranking_options.ranker` are accepted and ignored. */
@AcceptsUnknownFields()
export class SearchVectorStoreDto {
  @fieldRule('searchQuery', searchQueryProblem, {
    oneOf: [
      { type: 'string', maxLength: MAX_QUERY_CHARACTERS },
      {
        type: 'array',
        items: { type: 'string', maxLength: MAX_QUERY_CHARACTERS },
        minItems: 1,
        maxItems: SEARCH_QUERIES_MAX,
      },
    ],
    required: true,
    description: `The question, or OpenAI's list of questions (at most ${SEARCH_QUERIES_MAX}), which are joined by a space and asked as one (at most ${MAX_QUERY_CHARACTERS} characters in all).`,
    example: 'printer jams',
  })
  query: string | string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'OpenAI\'s comparison filter `{type: "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin", key, value}` or compound filter `{type: "and" | "or", filters: [...]}` over the files\' attributes (strings and numbers; a boolean value is a 400), nested at most 5 deep, at most 20 comparisons in all.',
    example: { type: 'eq', key: 'customer', value: 'acme' },
  })
  @AsParsed()
  @fieldRule('searchFilters', () => null)
  filters?: unknown;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SEARCH_RESULTS_MAX, default: 10 })
  @IntegerField({ min: 1, max: SEARCH_RESULTS_MAX })
  max_num_results?: number;

  @fieldRule('rankingOptions', rankingOptionsProblem, {
    type: 'object',
    properties: {
      ranker: { type: 'string', maxLength: 50 },
      score_threshold: { type: 'number', minimum: 0 },
    },
    additionalProperties: true,
    selfRequired: false,
    nullable: true,
    description:
      '`score_threshold`: only results scoring at least this much (scores are BM25 scores, not bounded by 1). `ranker` is accepted and ignored.',
    example: { score_threshold: 0.5 },
  })
  ranking_options?: { ranker?: string; score_threshold?: number | null } | null;
}

/** The text fields of `POST /v1/files` (multipart, beside `file`). */
@AcceptsUnknownFields()
export class FileUploadFieldsDto {
  @StringField({ max: 50 })
  purpose: string;
}

/** The multipart form of `POST /v1/files`. */
export class FileUploadForm {
  @ApiProperty({
    type: 'string',
    format: 'binary',
    maxLength: 10_485_760,
    description: 'The file: plain text, Markdown, HTML or PDF to be indexed when attached (within MAX_UPLOAD_BYTES).',
  })
  file: unknown;

  @ApiProperty({
    type: 'string',
    maxLength: 50,
    description: "OpenAI's purpose, kept as given.",
    example: 'assistants',
  })
  purpose: string;
}
