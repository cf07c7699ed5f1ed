import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { TeamRole } from '../common/roles.js';

/** Announced (pg_notify, on commit) with `<organization_id>:<user_id>` when a membership changes or ends. */
export const MEMBERSHIP_CHANGE_CHANNEL = 'membership_changed';

export interface MemberRow {
  user_id: string;
  email: string;
  role: TeamRole;
  joined_at: Date;
}

export interface OrganizationOfUserRow {
  id: string;
  name: string;
  role: TeamRole;
}

/**
 * The `memberships` table: who belongs to which organization, with which role (exactly one `owner`
 * per organization, which a partial unique index enforces). Methods that take an EntityManager run
 * inside the caller's transaction; those that change a membership also announce it on commit.
 */
@Injectable()
export class MembershipsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, organizationId: string, userId: string, role: TeamRole): Promise<void> {
    await manager.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)`, [
      organizationId,
      userId,
      role,
    ]);
    await this.announce(manager, organizationId, userId);
  }

  /**
   * The user's role in the organization and the second its membership began (whole seconds, as a
   * token's `iat`), or null when not a member.
   */
  async membershipOf(
    organizationId: string,
    userId: string,
  ): Promise<{ role: TeamRole; joinedAtSecond: number } | null> {
    const rows: { role: TeamRole; joined_at_second: number }[] = await this.dataSource.query(
      `SELECT role, floor(extract(epoch FROM joined_at))::float8 AS joined_at_second
         FROM memberships WHERE organization_id = $1 AND user_id = $2`,
      [organizationId, userId],
    );
    return rows[0] ? { role: rows[0].role, joinedAtSecond: rows[0].joined_at_second } : null;
  }

  /** The membership, locked until the transaction ends; null when there is none. */
  async lock(manager: EntityManager, organizationId: string, userId: string): Promise<MemberRow | null> {
    const rows: MemberRow[] = await manager.query(
      `SELECT m.user_id, u.email, m.role, m.joined_at
         FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND m.user_id = $2
          FOR UPDATE OF m`,
      [organizationId, userId],
    );
    return rows[0] ?? null;
  }

  async setRole(manager: EntityManager, organizationId: string, userId: string, role: TeamRole): Promise<void> {
    await manager.query('UPDATE memberships SET role = $3 WHERE organization_id = $1 AND user_id = $2', [
      organizationId,
      userId,
      role,
    ]);
    await this.announce(manager, organizationId, userId);
  }

  async delete(manager: EntityManager, organizationId: string, userId: string): Promise<void> {
    await manager.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
      organizationId,
      userId,
    ]);
    await this.announce(manager, organizationId, userId);
  }

  /** How many organizations the user belongs to, as the caller's transaction sees it. */
  async countOf(manager: EntityManager, userId: string): Promise<number> {
    const rows: { n: number }[] = await manager.query('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [
      userId,
    ]);
    return rows[0].n;
  }

  /** Members, the owner first, then by the date they joined. */
  async page(organizationId: string, page: { limit: number; offset: number }): Promise<[MemberRow[], number]> {
    const rows: MemberRow[] = await this.dataSource.query(
      `SELECT m.user_id, u.email, m.role, m.joined_at
         FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1
        ORDER BY m.role = 'owner' DESC, m.joined_at, m.user_id
        LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    );
    const counted: { n: number }[] = await this.dataSource.query(
      'SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1',
      [organizationId],
    );
    return [rows, counted[0].n];
  }

  /** Whether an account with this (lower-cased) e-mail is a member. */
  async hasMemberWithEmail(manager: EntityManager, organizationId: string, email: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.email = $2`,
      [organizationId, email],
    );
    return rows.length > 0;
  }

  /** The organizations the user belongs to, its own first, then by name (the first 1,000). */
  organizationsOf(userId: string): Promise<OrganizationOfUserRow[]> {
    return this.dataSource.query(
      `SELECT o.id, o.name, m.role
         FROM memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = $1
        ORDER BY o.id = (SELECT organization_id FROM users WHERE id = $1) DESC, o.name, o.id
        LIMIT 1000`,
      [userId],
    );
  }

  /** Tells every instance (the membership cache); delivered when the caller's transaction commits. */
  async announce(manager: EntityManager, organizationId: string, userId: string): Promise<void> {
    await manager.query('SELECT pg_notify($1, $2)', [MEMBERSHIP_CHANGE_CHANNEL, `${organizationId}:${userId}`]);
  }
}
