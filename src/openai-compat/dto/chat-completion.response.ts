import { ApiProperty } from '@nestjs/swagger';
import { CATALOGUE_MAX } from '../../domains/catalogue.js';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';
import { ANSWER_MAX } from '../../openapi/limits.js';
import { MAX_TOP_K } from '../../query/dto/query.dto.js';
import { SourceResponse } from '../../query/dto/query.response.js';

const COMPLETION_ID = { type: 'string', maxLength: 50, example: 'chatcmpl-0d8f6a526a0e4f7a9a431f2b3c4d5e6f' } as const;
/** Up to the last second of year 9999. */
const UNIX_SECONDS = {
  type: 'integer',
  format: 'int64',
  minimum: 0,
  maximum: 253_402_300_799,
  example: 1795000000,
} as const;
const MODEL = { ...SLUG_SCHEMA, description: '`private` or the public domain asked.', example: 'private' } as const;
/** A conversation fits in a request body, and each token is at least a character. */
const TOKENS = { type: 'integer', format: 'int64', minimum: 0, maximum: 1_000_000_000 } as const;

/** Token counts as OpenAI reports them, estimated (4 characters a token); credits are what is billed. */
export class CompletionUsageResponse {
  @ApiProperty({ ...TOKENS, description: 'The conversation read, estimated.', example: 12 })
  prompt_tokens: number;

  @ApiProperty({ ...TOKENS, description: 'The answer, estimated.', example: 17 })
  completion_tokens: number;

  @ApiProperty({ ...TOKENS, example: 29 })
  total_tokens: number;
}

export class AssistantMessageResponse {
  @ApiProperty({ type: 'string', enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: 'string', maxLength: ANSWER_MAX, description: 'The answer, citing sources as [n].' })
  content: string;
}

export class CompletionChoiceResponse {
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, maximum: 0 })
  index: number;

  @ApiProperty({ type: AssistantMessageResponse })
  message: AssistantMessageResponse;

  @ApiProperty({ type: 'string', enum: ['stop'] })
  finish_reason: 'stop';
}

/** `POST /v1/chat/completions` without `stream`: OpenAI's shape, plus the sources. */
export class ChatCompletionResponse {
  @ApiProperty(COMPLETION_ID)
  id: string;

  @ApiProperty({ type: 'string', enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty({ ...UNIX_SECONDS, description: 'When it was answered, in Unix seconds.' })
  created: number;

  @ApiProperty(MODEL)
  model: string;

  @ApiProperty({ type: CompletionChoiceResponse, isArray: true, minItems: 1, maxItems: 1 })
  choices: CompletionChoiceResponse[];

  @ApiProperty({ type: CompletionUsageResponse })
  usage: CompletionUsageResponse;

  @ApiProperty({
    type: SourceResponse,
    isArray: true,
    maxItems: MAX_TOP_K,
    description: 'The passages the answer draws on, best first; `[n]` in the answer is the n-th.',
  })
  sources: SourceResponse[];
}

/** One model of `GET /v1/models`: a knowledge base this caller may ask. */
export class ModelResponse {
  @ApiProperty({ ...MODEL, description: "`private` (the organization's documents) or a public domain's slug." })
  id: string;

  @ApiProperty({ type: 'string', enum: ['model'] })
  object: 'model';

  @ApiProperty({ ...UNIX_SECONDS, description: 'When the organization or the domain was created, in Unix seconds.' })
  created: number;

  @ApiProperty({
    type: 'string',
    enum: ['organization', 'public'],
    description: '`organization` for `private`, `public` for a public domain.',
  })
  owned_by: 'organization' | 'public';
}

export class ModelListResponse {
  @ApiProperty({ type: 'string', enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: ModelResponse, isArray: true, maxItems: CATALOGUE_MAX + 1 })
  data: ModelResponse[];
}
