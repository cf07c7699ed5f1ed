import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import type { ConversationTurn } from '../query/answerers/answerer.js';
import { type PreparedAnswer, QueryService } from '../query/query.service.js';
import { type ChatCompletionMessageDto, textOf } from './dto/chat-completion.dto.js';
import { knowledgeOfModel } from './models.service.js';

/** As many earlier turns as a chat session's answer reads (ChatService's HISTORY_TURNS). */
const HISTORY_TURNS = 10;
const TOP_K = 5;
const CHARACTERS_PER_TOKEN = 4;

export interface Conversation {
  question: string;
  history: ConversationTurn[];
}

/** The last user message is the question; the user and assistant messages before it, the history. */
export function conversationOf(messages: ChatCompletionMessageDto[]): Conversation {
  const last = messages.findLastIndex((message) => message.role === 'user');
  const history = messages
    .slice(0, last)
    .filter((message) => message.role === 'user' || message.role === 'assistant')
    .slice(-HISTORY_TURNS)
    .map((message) => ({ role: message.role as ConversationTurn['role'], content: textOf(message.content) }));
  return { question: textOf(messages[last].content).trim(), history };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** OpenAI's token counts, estimated: the service bills credits, not tokens. */
export function estimateUsage(conversation: Conversation, answer: string): Usage {
  const tokens = (text: string) => Math.ceil(text.length / CHARACTERS_PER_TOKEN);
  const prompt_tokens = [conversation.question, ...conversation.history.map((turn) => turn.content)].reduce(
    (sum, text) => sum + tokens(text),
    0,
  );
  const completion_tokens = tokens(answer);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** A chat completion is a question with history, answered and metered exactly like a chat message. */
@Injectable()
export class ChatCompletionsService {
  constructor(private readonly queries: QueryService) {}

  async prepare(
    caller: Principal,
    knowledge: { model: string; collectionIds?: readonly string[] | null },
    conversation: Conversation,
    signal: AbortSignal,
  ): Promise<PreparedAnswer> {
    const { model } = knowledge;
    const asked = knowledgeOfModel(model, knowledge.collectionIds);
    try {
      return await this.queries.prepare(caller, {
        text: conversation.question,
        ...asked,
        topK: TOP_K,
        operation: 'chat_completion',
        history: conversation.history,
        signal,
      });
    } catch (error) {
      // Here the unknown domain or collection is the model the client named: say so in OpenAI's terms (an
      // unknown one of `collection_ids` keeps its own 404, naming the collection).
      throw error instanceof NotFoundError && !knowledge.collectionIds ? NotFoundError.named('Model', model) : error;
    }
  }

  complete(prepared: PreparedAnswer, onDelta?: (text: string) => void): Promise<string> {
    return this.queries.complete(prepared, onDelta);
  }
}
