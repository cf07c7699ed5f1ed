import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { echoed } from '../../common/errors.js';
import { Type } from 'class-transformer';
import { ValidateNested } from 'class-validator';
import { COLLECTION_IDS_MAX } from '../../collections/collections.service.js';
import { CollectionIdsField } from '../../collections/dto/collection-ids.field.js';
import {
  AcceptsUnknownFields,
  BooleanField,
  fieldRule,
  IntegerField,
  REQUIRED,
  StringField,
  unstorableText,
} from '../../common/validation.js';
import { MAX_QUERY_CHARACTERS } from '../../query/dto/query.dto.js';

/** A conversation longer than a chat session shows (SESSION_MESSAGES_MAX) is refused, not cut. */
export const MESSAGES_MAX = 100;
/** One message's text; the question itself (the last user message) is held to a query's limit. */
export const MESSAGE_CONTENT_MAX = 16_000;
export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export interface TextPart {
  type: 'text';
  text: string;
}

const isTextPart = (part: unknown): part is TextPart => {
  const candidate = part as { type?: unknown; text?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.type === 'text' &&
    typeof candidate.text === 'string'
  );
};

/** A message's text: OpenAI's content is a string or a list of parts, of which only text ones are read. */
export function textOf(content: string | TextPart[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
}

const checkContent = (value: unknown): string | null => {
  if (value === undefined || value === null) return REQUIRED;
  if (Array.isArray(value) && !value.every(isTextPart))
    return 'Only text parts (`{"type": "text", "text": …}`) are read.';
  if (typeof value !== 'string' && !Array.isArray(value)) return 'Expected a string or a list of text parts.';
  const text = textOf(value as string | TextPart[]);
  if (text.trim() === '') return REQUIRED;
  if (text.length > MESSAGE_CONTENT_MAX) return `Ensure this field has no more than ${MESSAGE_CONTENT_MAX} characters.`;
  return unstorableText(text);
};

/** OpenAI's messages carry more than a role and a content (`name`, `tool_calls`…): accepted, not read. */
@AcceptsUnknownFields()
export class ChatCompletionMessageDto {
  @ApiProperty({ type: 'string', enum: MESSAGE_ROLES, example: 'user' })
  @fieldRule('messageRole', (value) => {
    if (value === undefined || value === null) return REQUIRED;
    return MESSAGE_ROLES.includes(value as MessageRole)
      ? null
      : `"${echoed(typeof value === 'string' ? value : JSON.stringify(value))}" is not a valid choice.`;
  })
  role: MessageRole;

  @ApiProperty({
    oneOf: [
      { type: 'string', maxLength: MESSAGE_CONTENT_MAX },
      {
        type: 'array',
        maxItems: 100,
        items: {
          type: 'object',
          required: ['type', 'text'],
          properties: {
            type: { type: 'string', enum: ['text'] },
            text: { type: 'string', maxLength: MESSAGE_CONTENT_MAX },
          },
        },
      },
    ],
    description: `The text, or a list of text parts (joined by new lines); at most ${MESSAGE_CONTENT_MAX} characters.`,
    example: 'How do I rotate an API key?',
  })
  @fieldRule('messageContent', checkContent)
  content: string | TextPart[];
}

/** The conversation as a whole: a list of 1 to MESSAGES_MAX objects, at least one a user's, whose last is a question. */
const checkMessages = (value: unknown): string | null => {
  if (value === undefined || value === null) return REQUIRED;
  if (!Array.isArray(value)) return 'Expected a list of messages.';
  if (value.length === 0) return 'This list may not be empty.';
  if (value.length > MESSAGES_MAX) return `Ensure this field has no more than ${MESSAGES_MAX} elements.`;
  if (!value.every((message) => typeof message === 'object' && message !== null && !Array.isArray(message)))
    return 'Each message must be an object with a `role` and a `content`.';
  const question = (value as { role?: unknown; content?: unknown }[]).findLast((message) => message.role === 'user');
  if (!question) return 'Include at least one message with the role "user": its last one is the question.';
  if (
    checkContent(question.content) === null &&
    textOf(question.content as string | TextPart[]).length > MAX_QUERY_CHARACTERS
  )
    return `The last user message is the question: at most ${MAX_QUERY_CHARACTERS} characters.`;
  return null;
};

/** OpenAI's clients send fields of their own (`user`, `top_p`, `n`…): accepted and ignored. */
@AcceptsUnknownFields()
export class ChatCompletionDto {
  @ApiProperty({
    type: 'string',
    maxLength: 50,
    description:
      "`private` (the organization's `default` collection, or an API key's own collections; with `collection_ids`, those), a collection's id (`default` stands for the default collection's), or a public domain's slug, as `GET /v1/models` lists them.",
    example: 'private',
  })
  @StringField({ max: 50 })
  model: string;

  @CollectionIdsField(
    `With \`model: "private"\` only (another model: 400): 1 to ${COLLECTION_IDS_MAX} collections to ask, ranked as one corpus, as a query's \`collection_ids\`. An unknown collection, or one the key may not reach: 404.`,
  )
  collection_ids?: string[] | null;

  @ApiProperty({
    type: ChatCompletionMessageDto,
    isArray: true,
    minItems: 1,
    maxItems: MESSAGES_MAX,
    description: `The conversation, oldest first (at most ${MESSAGES_MAX} messages). Its last \`user\` message is the question (at most ${MAX_QUERY_CHARACTERS} characters); the user and assistant messages before it are the history, as in a chat session. \`system\`, \`developer\` and \`tool\` messages are accepted and not read: the service grounds the answer itself.`,
  })
  @fieldRule('messages', checkMessages)
  @ValidateNested({ each: true })
  @Type(() => ChatCompletionMessageDto)
  messages: ChatCompletionMessageDto[];

  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description: 'Stream `chat.completion.chunk` Server-Sent Events ending with `data: [DONE]`.',
  })
  @BooleanField()
  stream?: boolean;

  @ApiPropertyOptional({ description: 'Accepted and ignored: the answer is as long as the sources call for.' })
  @IntegerField({ min: 1, max: 1_000_000 })
  max_tokens?: number;

  @ApiPropertyOptional({ type: 'number', minimum: 0, maximum: 2, description: 'Accepted and ignored.' })
  @fieldRule('temperature', (value) =>
    value === undefined || value === null || (typeof value === 'number' && value >= 0 && value <= 2)
      ? null
      : 'Ensure this value is a number from 0 to 2.',
  )
  temperature?: number;
}
