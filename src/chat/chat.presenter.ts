import { toIsoMicros } from '../common/timestamps.js';
import type { ChatMessage } from './chat-message.entity.js';
import type { ChatSession } from './chat-session.entity.js';
import { SourceResponse } from '../query/dto/query.response.js';
import type { ChatMessageResponse, ChatSessionResponse } from './dto/chat.response.js';

const UNLOCATED = { start: null, end: null, page: null };

export function presentSession(session: ChatSession): ChatSessionResponse {
  return {
    id: session.id,
    title: session.title,
    domain: session.domain,
    created_at: toIsoMicros(session.createdAt),
    updated_at: toIsoMicros(session.updatedAt),
  };
}

export function presentMessage(message: ChatMessage): ChatMessageResponse {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    // Messages stored before sources were located lack their offsets: unknown, so null.
    sources: message.sources.map((source) => Object.assign(new SourceResponse(), UNLOCATED, source)),
    created_at: toIsoMicros(message.createdAt),
  };
}
