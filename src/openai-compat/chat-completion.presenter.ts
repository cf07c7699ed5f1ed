import { randomUUID } from 'node:crypto';
import type { RetrievedSource } from '../retrieval/retriever.js';
import { presentSource } from '../query/source.presenter.js';
import type { Usage } from './chat-completions.service.js';

/** What every chunk of one completion, and the completion itself, share. */
export interface CompletionHeader {
  id: string;
  created: number;
  model: string;
}

export function newCompletionHeader(model: string): CompletionHeader {
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function presentCompletion(header: CompletionHeader, answer: string, sources: RetrievedSource[], usage: Usage) {
  return {
    ...header,
    object: 'chat.completion' as const,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: answer }, finish_reason: 'stop' as const }],
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
export function presentLastChunk(header: CompletionHeader, sources: RetrievedSource[], usage: Usage) {
  return {
    ...header,
    object: 'chat.completion.chunk' as const,
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' as const }],
    usage,
    sources: sources.map(presentSource),
  };
}
