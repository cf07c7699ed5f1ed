import { randomUUID } from 'node:crypto';
import type { RetrievedSource } from '../retrieval/retriever.js';
import { presentSource } from '../query/source.presenter.js';
import type { ChatCompletionResponse, CompletionUsageResponse } from './dto/chat-completion.response.js';

/** What every chunk of one completion, and the completion itself, share. */
export interface CompletionHeader {
  id: string;
  created: number;
  model: string;
}

export function newCompletionHeader(model: string): CompletionHeader {
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function presentCompletion(
  header: CompletionHeader,
  answer: string,
  sources: RetrievedSource[],
  usage: CompletionUsageResponse,
): ChatCompletionResponse {
  return {
    ...header,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
    usage,
    sources: sources.map(presentSource),
  };
}

/** A `chat.completion.chunk`: the first carries the role, the middle ones the text, the last the finish. */
export function presentChunk(header: CompletionHeader, delta: { role?: 'assistant'; content?: string }) {
  return {
    ...header,
    object: 'chat.completion.chunk' as const,
    choices: [{ index: 0, delta, finish_reason: null }],
  };
}

/** The last chunk: the finish reason, the usage, and the sources (which OpenAI's chunks do not have). */
export function presentLastChunk(header: CompletionHeader, sources: RetrievedSource[], usage: CompletionUsageResponse) {
  return {
    ...header,
    object: 'chat.completion.chunk' as const,
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' as const }],
    usage,
    sources: sources.map(presentSource),
  };
}
