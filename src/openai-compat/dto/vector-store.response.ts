import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_LIMIT } from '../../common/pagination.js';
import { DOCUMENT_TEXT_MAX } from '../../openapi/limits.js';
import { SEARCH_RESULTS_MAX } from './vector-store.dto.js';

const ID = { type: 'string', maxLength: 100, example: '3f6c1d2e-8a4b-4c6d-9e0f-1a2b3c4d5e6f' } as const;
const UNIX_SECONDS = {
  type: 'integer',
  format: 'int64',
  minimum: 0,
  maximum: 253_402_300_799,
  example: 1795000000,
} as const;
const COUNT = { type: 'integer', format: 'int64', minimum: 0, maximum: 9_007_199_254_740_991 } as const;
const ATTRIBUTES: ApiPropertyOptions = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: { oneOf: [{ type: 'string', maxLength: 1000 }, { type: 'number' }] },
  example: { customer: 'acme' },
};

export class FileCountsResponse {
  @ApiProperty(COUNT) in_progress: number;
  @ApiProperty(COUNT) completed: number;
  @ApiProperty(COUNT) failed: number;
  @ApiProperty(COUNT) cancelled: number;
  @ApiProperty(COUNT) total: number;
}

/** A collection in OpenAI's `vector_store` shape. */
export class VectorStoreResponse {
  @ApiProperty({ ...ID, description: "The collection's id." }) id: string;
  @ApiProperty({ type: 'string', enum: ['vector_store'] }) object: 'vector_store';
  @ApiProperty(UNIX_SECONDS) created_at: number;
  @ApiProperty({ type: 'string', maxLength: 100, example: 'Support tickets' }) name: string;
  @ApiProperty({ type: 'string', maxLength: 2000, nullable: true }) description: string | null;
  @ApiProperty({ ...COUNT, description: 'Bytes of its documents.' }) usage_bytes: number;
  @ApiProperty({ type: FileCountsResponse }) file_counts: FileCountsResponse;
  @ApiProperty({ type: 'string', enum: ['completed', 'in_progress'] }) status: 'completed' | 'in_progress';
  @ApiProperty(UNIX_SECONDS) last_active_at: number;
  @ApiProperty(ATTRIBUTES) metadata: Record<string, string | number>;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, example: null })
  expires_after: null;
  @ApiProperty({ ...UNIX_SECONDS, nullable: true, example: null }) expires_at: number | null;
}

export class FileResponse {
  @ApiProperty(ID) id: string;
  @ApiProperty({ type: 'string', enum: ['file'] }) object: 'file';
  @ApiProperty(COUNT) bytes: number;
  @ApiProperty(UNIX_SECONDS) created_at: number;
  @ApiProperty({ type: 'string', maxLength: 300, example: 'handbook.md' }) filename: string;
  @ApiProperty({ type: 'string', maxLength: 50, example: 'assistants' }) purpose: string;
  @ApiProperty({ type: 'string', enum: ['processed'] }) status: 'processed';
}

export class LastErrorResponse {
  @ApiProperty({ type: 'string', enum: ['unsupported_file', 'invalid_file', 'server_error'] }) code: string;
  @ApiProperty({ type: 'string', maxLength: 20000 }) message: string;
}

export class VectorStoreFileResponse {
  @ApiProperty({ ...ID, description: "The file's id." }) id: string;
  @ApiProperty({ type: 'string', enum: ['vector_store.file'] }) object: 'vector_store.file';
  @ApiProperty(COUNT) usage_bytes: number;
  @ApiProperty(UNIX_SECONDS) created_at: number;
  @ApiProperty(ID) vector_store_id: string;
  @ApiProperty({ type: 'string', enum: ['in_progress', 'completed', 'failed', 'cancelled'] }) status: string;
  @ApiProperty({ type: LastErrorResponse, nullable: true }) last_error: LastErrorResponse | null;
  @ApiProperty(ATTRIBUTES) attributes: Record<string, string | number>;
  @ApiProperty({
    type: 'object',
    description:
      "OpenAI's static strategy with the chunker's figures (it counts words: 400 a chunk at most, 50 of overlap at most; here in tokens, 4 per 3 words).",
    properties: {
      type: { type: 'string', enum: ['static'] },
      static: {
        type: 'object',
        properties: {
          max_chunk_size_tokens: { type: 'integer', format: 'int32', minimum: 1, maximum: 4096 },
          chunk_overlap_tokens: { type: 'integer', format: 'int32', minimum: 0, maximum: 2048 },
        },
        required: ['max_chunk_size_tokens', 'chunk_overlap_tokens'],
      },
    },
    required: ['type', 'static'],
    example: { type: 'static', static: { max_chunk_size_tokens: 534, chunk_overlap_tokens: 67 } },
  })
  chunking_strategy: { type: 'static'; static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number } };
}

export class DeletedResponse {
  @ApiProperty(ID) id: string;
  @ApiProperty({ type: 'string', enum: ['vector_store.deleted', 'file', 'vector_store.file.deleted'] }) object: string;
  @ApiProperty({ type: 'boolean', enum: [true] }) deleted: true;
}

const listOf = (item: object, name: string) => {
  class List {
    @ApiProperty({ type: 'string', enum: ['list'] }) object: 'list';
    @ApiProperty({ type: item as never, isArray: true, maxItems: MAX_LIMIT }) data: unknown[];
    @ApiProperty({ ...ID, nullable: true }) first_id: string | null;
    @ApiProperty({ ...ID, nullable: true }) last_id: string | null;
    @ApiProperty({ type: 'boolean' }) has_more: boolean;
  }
  Object.defineProperty(List, 'name', { value: name });
  return List;
};

export const VectorStoreList = listOf(VectorStoreResponse, 'VectorStoreList');
export const FileList = listOf(FileResponse, 'FileList');
export const VectorStoreFileList = listOf(VectorStoreFileResponse, 'VectorStoreFileList');

export class SearchContentResponse {
  @ApiProperty({ type: 'string', enum: ['text'] }) type: 'text';
  @ApiProperty({ type: 'string', maxLength: DOCUMENT_TEXT_MAX }) text: string;
}

export class VectorStoreSearchResultResponse {
  @ApiProperty(ID) file_id: string;
  @ApiProperty({ type: 'string', maxLength: 300 }) filename: string;
  @ApiProperty({ type: 'number', minimum: 0, example: 3.2 }) score: number;
  @ApiProperty(ATTRIBUTES) attributes: Record<string, string | number>;
  @ApiProperty({ type: SearchContentResponse, isArray: true, maxItems: 1 }) content: SearchContentResponse[];
}

export class VectorStoreSearchPage {
  @ApiProperty({ type: 'string', enum: ['vector_store.search_results.page'] })
  object: 'vector_store.search_results.page';
  @ApiProperty({ type: 'string', maxLength: 4000 }) search_query: string;
  @ApiProperty({ type: VectorStoreSearchResultResponse, isArray: true, maxItems: SEARCH_RESULTS_MAX })
  data: VectorStoreSearchResultResponse[];
  @ApiProperty({ type: 'boolean', enum: [false] }) has_more: false;
  @ApiProperty({ type: 'string', maxLength: 100, nullable: true, example: null }) next_page: null;
}
