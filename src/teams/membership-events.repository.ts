import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** How many members `GET /v1/billings/usage/members/` lists at most. */
export const MEMBERS_USAGE_MAX = 1000;

/** What a membership event records (CONTRACT, third edition: the organization's audit log). */
export type MembershipAction =
  | 'member.invited'
  | 'member.joined'
  | 'member.role_changed'
  | 'member.removed'
  | 'member.left'
  | 'invitation.revoked'
  | 'ownership.transferred';

/** Who made a change and from where. */
export interface TeamAuditContext {
  actorUserId: string | null;
  requestId: string | null;
  ip: string | null;
}

export interface OrganizationEventRow {
  id: string;
  action: string;
  actor_user_id: string | null;
  target_user_id: string | null;
  changes: Record<string, unknown> | null;
  request_id: string | null;
  ip: string | null;
  created_at: Date;
  key_id: string | null;
  key_prefix: string | null;
}

/** The `membership_events` table, and the organization's audit log (its key events and these, as one list). */
@Injectable()
export class MembershipEventsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async record(
    manager: EntityManager,
    event: {
      organizationId: string;
      action: MembershipAction;
      targetUserId: string | null;
      changes: Record<string, unknown> | null;
    },
    context: TeamAuditContext,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO membership_events (organization_id, action, actor_user_id, target_user_id, changes, request_id, ip)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
      [
        event.organizationId,
        event.action,
        context.actorUserId,
        event.targetUserId,
        event.changes === null ? null : JSON.stringify(event.changes),
        context.requestId,
        context.ip,
      ],
    );
  }

  /**
   * The organization's key events (their action as `api_key.<action>`) and membership events, newest
   * first; the id breaks ties between entries of one instant.
   */
  async page(
    organizationId: string,
    page: { limit: number; offset: number },
  ): Promise<[OrganizationEventRow[], number]> {
    const rows: OrganizationEventRow[] = await this.dataSource.query(
      `SELECT * FROM (
         SELECT id, 'api_key.' || action AS action, actor_user_id, NULL::uuid AS target_user_id, changes,
                request_id, ip, created_at, key_id, key_prefix
           FROM api_key_events WHERE organization_id = $1
         UNION ALL
         SELECT id, action, actor_user_id, target_user_id, changes, request_id, ip, created_at,
                NULL::uuid AS key_id, NULL::varchar AS key_prefix
           FROM membership_events WHERE organization_id = $1
       ) events
       ORDER BY created_at DESC, id DESC
       LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    );
    const counted: { n: number }[] = await this.dataSource.query(
      `SELECT (SELECT count(*) FROM api_key_events WHERE organization_id = $1)::int
            + (SELECT count(*) FROM membership_events WHERE organization_id = $1)::int AS n`,
      [organizationId],
    );
    return [rows, counted[0].n];
  }

  /** This period's spend of each member: requests and credits, by user (a key counts for its creator). */
  usageByMember(
    organizationId: string,
    periodSql: string,
  ): Promise<{ user_id: string; email: string; requests: number; credits: number }[]> {
    return this.dataSource.query(
      `SELECT m.user_id, u.email,
              count(e.id)::int AS requests, COALESCE(sum(e.credits), 0)::int AS credits
         FROM memberships m
         JOIN users u ON u.id = m.user_id
         LEFT JOIN usage_events e
           ON e.organization_id = m.organization_id AND e.user_id = m.user_id
          AND e.created_at >= (${periodSql})::timestamp AT TIME ZONE 'UTC'
        WHERE m.organization_id = $1
        GROUP BY m.user_id, u.email, m.joined_at
        ORDER BY credits DESC, m.joined_at, m.user_id
        LIMIT ${MEMBERS_USAGE_MAX}`,
      [organizationId],
    );
  }
}
