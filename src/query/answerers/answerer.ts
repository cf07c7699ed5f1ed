import type { QueryTerm, RetrievedSource } from '../../retrieval/retriever.js';

export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface AnswerInput {
  question: string;
  passages: RetrievedSource[];
  /** The question's terms as retrieval weighed them, and what a word the corpus lacks weighs (see `Retrieval`). */
  terms?: QueryTerm[];
  unseenWeight?: number;
  /** Earlier turns of a chat, oldest first. */
  history?: ConversationTurn[];
  /** Aborted when the client has gone: stop any upstream work. */
  signal?: AbortSignal;
}

/** Writes the answer as a sequence of text deltas; failures surface while iterating. */
export interface Answerer {
  answer(input: AnswerInput): AsyncIterable<string>;
}

export const ANSWERER = Symbol('ANSWERER');

export const NOTHING_FOUND = 'I could not find anything in the knowledge base that answers this question.';
