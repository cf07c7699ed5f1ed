import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import type { SourceResponse } from '../query/dto/query.response.js';
import { ChatMessage } from './chat-message.entity.js';
import { ChatSession } from './chat-session.entity.js';

/** Whose sessions: a user in an organization, through a credential that may be limited to collections. */
export interface SessionOwner {
  userId: string;
  organizationId: string;
  collectionIds?: readonly string[] | null;
}

/** `updated_at` from the database clock, as `created_at` is. */
const TOUCHED = () => 'clock_timestamp()';

/** The `chat_sessions` and `chat_messages` tables: a session and its messages are read and written together. */
@Injectable()
export class ChatRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get sessions() {
    return this.dataSource.getRepository(ChatSession);
  }

  private get messages() {
    return this.dataSource.getRepository(ChatMessage);
  }

  createSession(
    session: Pick<ChatSession, 'organizationId' | 'userId' | 'title' | 'domain' | 'collectionIds'>,
  ): Promise<ChatSession> {
    return this.sessions.save(this.sessions.create(session));
  }

  /**
   * The user's sessions in one organization (a team member's sessions in another, or in one it left,
   * hold that organization's answers), most recently active first.
   */
  sessionPage(owner: SessionOwner, page: PageRequest): Promise<[ChatSession[], number]> {
    return this.owned(owner).orderBy('s.updatedAt', 'DESC').take(page.limit).skip(page.offset).getManyAndCount();
  }

  /** Null for a missing session, someone else's, or one of the user's in another organization. */
  findSession(owner: SessionOwner, sessionId: string): Promise<ChatSession | null> {
    return this.owned(owner).andWhere('s.id = :sessionId', { sessionId }).getOne();
  }

  /**
   * The user's sessions in the organization; for a key limited to collections, only those opened within
   * its own collections (a wider caller's session may hold answers from any collection).
   */
  private owned(owner: SessionOwner) {
    const query = this.sessions
      .createQueryBuilder('s')
      .where('s.userId = :userId AND s.organizationId = :organizationId', {
        userId: owner.userId,
        organizationId: owner.organizationId,
      });
    return owner.collectionIds
      ? query.andWhere('s.collectionIds IS NOT NULL AND s.collectionIds <@ CAST(:reach AS uuid[])', {
          reach: [...owner.collectionIds],
        })
      : query;
  }

  async rename(sessionId: string, title: string): Promise<void> {
    await this.sessions.update({ id: sessionId }, { title, updatedAt: TOUCHED });
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.sessions.delete({ id: sessionId });
  }

  /** The newest `limit` messages, newest first. */
  newestMessages(sessionId: string, limit: number): Promise<ChatMessage[]> {
    // An exchange's two messages share a timestamp: the answer is the newer of the two.
    return this.messages.find({ where: { sessionId }, order: { createdAt: 'DESC', role: 'ASC' }, take: limit });
  }

  /** Oldest first. */
  messagePage(sessionId: string, page: PageRequest): Promise<[ChatMessage[], number]> {
    return this.messages.findAndCount({
      where: { sessionId },
      order: { createdAt: 'ASC', role: 'DESC' }, // the question before its answer
      skip: page.offset,
      take: page.limit,
    });
  }

  /** A question and its answer, stored together in one transaction, and the session marked active. */
  storeExchange(
    sessionId: string,
    question: string,
    answer: string,
    sources: SourceResponse[],
  ): Promise<{ user: ChatMessage; assistant: ChatMessage }> {
    return this.dataSource.transaction(async (manager) => {
      const user = await manager.save(
        manager.create(ChatMessage, { sessionId, role: 'user', content: question, sources: [] }),
      );
      const assistant = await manager.save(
        manager.create(ChatMessage, { sessionId, role: 'assistant', content: answer, sources }),
      );
      await manager.update(ChatSession, { id: sessionId }, { updatedAt: TOUCHED });
      return { user, assistant };
    });
  }
}
