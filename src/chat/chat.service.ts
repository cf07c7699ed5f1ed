import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors.js';
import type { PageRequest } from '../common/pagination.js';
import { isForeignKeyViolation } from '../database/pg-errors.js';
import type { Principal } from '../common/principal.js';
import { KnowledgeBaseService } from '../query/knowledge-base.service.js';
import { QueryService } from '../query/query.service.js';
import { presentSource } from '../query/source.presenter.js';
import { QuotaService, type Reservation } from '../billing/quota.service.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import type { ChatMessage } from './chat-message.entity.js';
import type { ChatSession } from './chat-session.entity.js';
import { ChatRepository } from './chat.repository.js';
import { SESSION_MESSAGES_MAX } from './limits.js';

const HISTORY_TURNS = 10;
const DEFAULT_TOP_K = 5;

@Injectable()
export class ChatService {
  constructor(
    private readonly chats: ChatRepository,
    private readonly knowledgeBases: KnowledgeBaseService,
    private readonly queries: QueryService,
    private readonly quota: QuotaService,
  ) {}

  /** The domain is checked now (404/403) so a session never points at something it cannot ask. */
  async create(
    caller: Principal,
    title: string | null | undefined,
    domain: string | null | undefined,
  ): Promise<ChatSession> {
    const knowledgeBase = await this.knowledgeBases.resolve(caller, domain);
    return this.chats.createSession({
      organizationId: caller.organizationId,
      userId: caller.userId,
      title: title ?? 'New chat',
      domain: knowledgeBase.domain,
      collectionIds: caller.collectionIds ? [...caller.collectionIds] : null,
    });
  }

  async list(caller: Principal, page: PageRequest): Promise<[ChatSession[], number]> {
    return this.chats.sessionPage(caller, page);
  }

  async get(caller: Principal, sessionId: string): Promise<ChatSession> {
    const session = await this.chats.findSession(caller, sessionId);
    if (!session) throw NotFoundError.named('Session', sessionId);
    return session;
  }

  /** The session's newest SESSION_MESSAGES_MAX messages, oldest first (a session can grow without end). */
  async latestMessages(sessionId: string): Promise<ChatMessage[]> {
    return (await this.chats.newestMessages(sessionId, SESSION_MESSAGES_MAX)).reverse();
  }

  /** One page of the session's messages, oldest first, and how many it has. */
  messagePage(sessionId: string, page: PageRequest): Promise<[ChatMessage[], number]> {
    return this.chats.messagePage(sessionId, page);
  }

  async rename(caller: Principal, sessionId: string, title: string): Promise<ChatSession> {
    const session = await this.get(caller, sessionId);
    await this.chats.rename(session.id, title);
    return this.get(caller, session.id);
  }

  async remove(caller: Principal, sessionId: string): Promise<void> {
    const session = await this.get(caller, sessionId);
    await this.chats.deleteSession(session.id);
  }

  /**
   * Answers a new message with the session's recent history in mind, costing credits like a query:
   * both messages, and the credits spent on the answer (for the response's credit headers). Both
   * messages are stored together, only once the answer exists; if storing fails, the credit comes
   * back. A client that goes (`signal`) before the answer exists leaves the search line, or stops the
   * answer, and is charged nothing; nothing is stored.
   */
  async post(
    caller: Principal,
    sessionId: string,
    content: string,
    filter?: MetadataFilter | null,
    collectionIds?: readonly string[] | null,
    signal?: AbortSignal,
  ): Promise<{ user: ChatMessage; assistant: ChatMessage; reservation: Reservation }> {
    const session = await this.get(caller, sessionId);
    const history = (await this.recentMessages(session.id)).map((message) => ({
      role: message.role,
      content: message.content,
    }));
    // A session opened by a key limited to collections asks only those, whoever writes in it.
    const asker = session.collectionIds ? { ...caller, collectionIds: session.collectionIds } : caller;
    const prepared = await this.queries.prepare(asker, {
      text: content,
      domain: session.domain,
      collectionIds,
      topK: DEFAULT_TOP_K,
      filter,
      operation: 'chat_message',
      history,
      signal,
    });
    const answer = await this.queries.complete(prepared);
    try {
      const stored = await this.chats.storeExchange(session.id, content, answer, prepared.sources.map(presentSource));
      return { ...stored, reservation: prepared.reservation };
    } catch (error) {
      await this.quota.refund(prepared.reservation);
      // The session was deleted while its answer was being written.
      throw isForeignKeyViolation(error) ? NotFoundError.named('Session', session.id) : error;
    }
  }

  private async recentMessages(sessionId: string): Promise<ChatMessage[]> {
    return (await this.chats.newestMessages(sessionId, HISTORY_TURNS)).reverse();
  }
}
