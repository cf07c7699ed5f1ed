import { toIsoMicros } from '../common/timestamps.js';
import type { ChatMessage } from './chat-message.entity.js';
import type { ChatSession } from './chat-session.entity.js';
import type { ChatMessageResponse, ChatSessionResponse } from './dto/chat.response.js';

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
    sources: message.sources,
    created_at: toIsoMicros(message.createdAt),
  };
}
