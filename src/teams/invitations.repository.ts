import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AssignableRole } from '../common/roles.js';

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: AssignableRole;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, organization_id, email, role, created_at, expires_at, accepted_at, revoked_at';
/** Neither accepted, revoked nor expired. */
const PENDING = 'accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()';

/** The `invitations` table: only a SHA-256 of each token is kept. */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Locks the organization against other invitations until the transaction ends (NO KEY UPDATE: rows
   * that reference it are not held up), so the "already invited" and "at most so many" checks hold.
   */
  async lockOrganization(manager: EntityManager, organizationId: string): Promise<void> {
    await manager.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
  }

  async countPending(manager: EntityManager, organizationId: string): Promise<number> {
    const rows: { n: number }[] = await manager.query(
      `SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1 AND ${PENDING}`,
      [organizationId],
    );
    return rows[0].n;
  }

  async hasPendingFor(manager: EntityManager, organizationId: string, email: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM invitations WHERE organization_id = $1 AND email = $2 AND ${PENDING}`,
      [organizationId, email],
    );
    return rows.length > 0;
  }

  async insert(
    manager: EntityManager,
    invitation: { organizationId: string; email: string; role: AssignableRole; tokenHash: string; invitedBy: string },
    validDays: number,
  ): Promise<InvitationRow> {
    const rows: InvitationRow[] = await manager.query(
      `INSERT INTO invitations (organization_id, email, role, token_hash, invited_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(days => $6::int))
       RETURNING ${COLUMNS}`,
      [
        invitation.organizationId,
        invitation.email,
        invitation.role,
        invitation.tokenHash,
        invitation.invitedBy,
        validDays,
      ],
    );
    return rows[0];
  }

  async pagePending(
    organizationId: string,
    page: { limit: number; offset: number },
  ): Promise<[InvitationRow[], number]> {
    const rows: InvitationRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM invitations WHERE organization_id = $1 AND ${PENDING}
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    );
    const counted: { n: number }[] = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1 AND ${PENDING}`,
      [organizationId],
    );
    return [rows, counted[0].n];
  }

  /** Revokes a pending invitation of the organization; null when there is none with that id. */
  async revokePending(manager: EntityManager, organizationId: string, id: string): Promise<InvitationRow | null> {
    const rows: InvitationRow[] = await manager.query(
      // Wrapped in a SELECT: TypeORM answers an UPDATE's rows as [rows, count].
      `WITH revoked AS (
         UPDATE invitations SET revoked_at = clock_timestamp()
          WHERE id = $1 AND organization_id = $2 AND ${PENDING}
          RETURNING ${COLUMNS})
       SELECT * FROM revoked`,
      [id, organizationId],
    );
    return rows[0] ?? null;
  }

  /** The invitation with this token hash, locked until the transaction ends, whatever its state. */
  async lockByHash(manager: EntityManager, tokenHash: string): Promise<(InvitationRow & { expired: boolean }) | null> {
    const rows: (InvitationRow & { expired: boolean })[] = await manager.query(
      `SELECT ${COLUMNS}, expires_at <= now() AS expired FROM invitations WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async markAccepted(manager: EntityManager, id: string, userId: string): Promise<void> {
    await manager.query('UPDATE invitations SET accepted_at = clock_timestamp(), accepted_by = $2 WHERE id = $1', [
      id,
      userId,
    ]);
  }
}
