import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';
import { ApiKeyEvent } from './api-key-event.entity.js';

export type NewApiKeyEvent = Omit<ApiKeyEvent, 'id' | 'createdAt'>;

/** The `api_key_events` audit log: written inside the change's own transaction, read newest first. */
@Injectable()
export class ApiKeyEventsRepository {
  constructor(@InjectRepository(ApiKeyEvent) private readonly events: Repository<ApiKeyEvent>) {}

  async record(manager: EntityManager, event: NewApiKeyEvent): Promise<void> {
    await manager.query(
      `INSERT INTO api_key_events (organization_id, key_id, key_prefix, action, actor_user_id, changes, request_id, ip)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`,
      [
        event.organizationId,
        event.keyId,
        event.keyPrefix,
        event.action,
        event.actorUserId,
        event.changes === null ? null : JSON.stringify(event.changes),
        event.requestId,
        event.ip,
      ],
    );
  }

  /** Newest first; the id breaks ties between entries of one instant. */
  page(organizationId: string, page: PageRequest): Promise<[ApiKeyEvent[], number]> {
    return this.events.findAndCount({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
  }

  /** The e-mails of the users who made these changes (a deleted user is missing from the map). */
  async actorEmails(userIds: string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map();
    const rows: { id: string; email: string }[] = await this.events.query(
      'SELECT id, email FROM users WHERE id = ANY($1::uuid[])',
      [userIds],
    );
    return new Map(rows.map((row) => [row.id, row.email]));
  }
}
