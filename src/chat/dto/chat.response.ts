import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../openapi/page.response.js';
import { SourceResponse } from '../../query/dto/query.response.js';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';
import { ANSWER_MAX } from '../../openapi/limits.js';
import { MAX_TOP_K } from '../../query/dto/query.dto.js';
import { SESSION_MESSAGES_MAX } from '../limits.js';

/** A chat session as `presentSession` returns it. */
export class ChatSessionResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({
    type: 'string',
    maxLength: 200,
    description: '"New chat" unless a title was given.',
    example: 'Key rotation questions',
  })
  title: string;

  @ApiProperty({
    ...SLUG_SCHEMA,
    nullable: true,
    description: "The public domain the session asks, or null for the organization's private documents.",
  })
  domain: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'Changes with every message and rename; lists are ordered by it, newest first.',
  })
  updated_at: string;
}

/** A message as `presentMessage` returns it. */
export class ChatMessageResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', enum: ['user', 'assistant'] })
  role: 'user' | 'assistant';

  @ApiProperty({
    type: 'string',
    maxLength: ANSWER_MAX,
    description: 'The question (at most 4,000 characters) or the answer.',
  })
  content: string;

  @ApiProperty({
    type: SourceResponse,
    isArray: true,
    maxItems: MAX_TOP_K,
    description: "The assistant's sources; empty for the user's messages.",
  })
  sources: SourceResponse[];

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}

/** `GET /v1/chat/sessions/{id}/`: the session with its messages, oldest first. */
export class ChatSessionDetailResponse extends ChatSessionResponse {
  @ApiProperty({
    type: ChatMessageResponse,
    isArray: true,
    maxItems: SESSION_MESSAGES_MAX,
    description: `The newest ${SESSION_MESSAGES_MAX} messages, oldest first; \`GET …/messages/\` pages through all of them.`,
  })
  messages: ChatMessageResponse[];
}

/** `POST /v1/chat/sessions/{id}/messages/`: both stored messages. */
export class ChatExchangeResponse {
  @ApiProperty({ type: ChatMessageResponse })
  user_message: ChatMessageResponse;

  @ApiProperty({ type: ChatMessageResponse, description: "The answer, with the session's history in mind." })
  assistant_message: ChatMessageResponse;
}

export const ChatSessionPage = PageOf(ChatSessionResponse, 'ChatSessionPage');
export const ChatMessagePage = PageOf(ChatMessageResponse, 'ChatMessagePage');
