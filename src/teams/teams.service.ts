import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { MembershipCache } from '../auth/membership-cache.js';
import { BadRequestError, ConflictError, NotFoundError, PermissionDeniedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { type AssignableRole, roleAtLeast } from '../common/roles.js';
import { AccountCache } from '../auth/account-cache.js';
import { UsersService } from '../auth/users.service.js';
import { type MemberRow, MembershipsRepository } from '../organizations/memberships.repository.js';
import { type InvitationRow, InvitationsRepository } from './invitations.repository.js';
import {
  type MembershipAction,
  MembershipEventsRepository,
  type TeamAuditContext,
} from './membership-events.repository.js';

/** The contract's 400 for an unknown, used, revoked or expired invitation token, verbatim. */
export const INVITATION_INVALID = 'This invitation is invalid or has expired.';
export const INVITATION_VALID_DAYS = 7;
export const MAX_PENDING_INVITATIONS = 100;
export const ALREADY_MEMBER = 'A user with this e-mail is already a member of the organization.';
export const ALREADY_INVITED = 'This e-mail already has a pending invitation to the organization.';
export const TOO_MANY_INVITATIONS = `This organization already has ${MAX_PENDING_INVITATIONS} pending invitations, the most it may have; revoke one before inviting another.`;
export const OWNER_NOT_REMOVED = 'The owner cannot be removed from the organization; transfer ownership first.';
export const OWNER_NOT_DEMOTED = "The owner's role cannot be changed; transfer ownership instead.";
export const OWNER_CANNOT_LEAVE = 'The owner cannot leave the organization; transfer ownership first.';
export const ALREADY_OWNER = 'You already own this organization.';
export const ALREADY_JOINED = 'You are already a member of this organization.';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** `inv_` and 32 base62 characters from a CSPRNG (about 190 bits). */
const INVITATION_TOKEN = /^inv_[0-9A-Za-z]{32}$/;

function newInvitationToken(): string {
  let body = '';
  while (body.length < 32) {
    for (const byte of randomBytes(48)) {
      // 248 = 4 × 62: rejection keeps every character equally likely.
      if (byte < 248 && body.length < 32) body += BASE62[byte % 62];
    }
  }
  return `inv_${body}`;
}

export const hashInvitationToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Teams (CONTRACT, third edition): members, roles, invitations. Who may call each route is its
 * declared role (the permissions guard); what depends on the target (the owner, oneself) is here.
 * Every change runs in one transaction with its audit entry and its announcement (pg_notify on
 * commit: other instances' membership caches, and the key cache for keys revoked); this instance
 * forgets at once after the commit.
 */
@Injectable()
export class TeamsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly memberships: MembershipsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly events: MembershipEventsRepository,
    private readonly roles: MembershipCache,
    private readonly accounts: AccountCache,
    private readonly apiKeys: ApiKeysService,
    private readonly users: UsersService,
  ) {}

  listMembers(caller: Principal, page: { limit: number; offset: number }): Promise<[MemberRow[], number]> {
    return this.memberships.page(caller.organizationId, page);
  }

  async changeRole(
    caller: Principal,
    userId: string,
    role: AssignableRole,
    audit: TeamAuditContext,
  ): Promise<MemberRow> {
    const organizationId = caller.organizationId;
    try {
      return await this.dataSource.transaction(async (manager) => {
        const member = await this.lockMember(manager, organizationId, userId);
        if (member.role === 'owner') throw new ConflictError(OWNER_NOT_DEMOTED);
        if (member.role === role) return member;
        await this.memberships.setRole(manager, organizationId, userId, role);
        await this.record(manager, organizationId, 'member.role_changed', userId, { role: [member.role, role] }, audit);
        return { ...member, role };
      });
    } finally {
      this.roles.forget(organizationId, userId);
    }
  }

  /**
   * Removes a member (admins and the owner), or the caller itself (leaving, any role but the owner).
   * One whose last membership this was gets a new organization of its own, in the same transaction.
   */
  async remove(caller: Principal, userId: string, audit: TeamAuditContext): Promise<void> {
    const organizationId = caller.organizationId;
    const leaving = userId === caller.userId;
    if (!leaving && !roleAtLeast(caller.role, 'admin')) throw new PermissionDeniedError();
    let revokedKeys: string[] = [];
    try {
      const ownOrganization = await this.dataSource.transaction(async (manager) => {
        const member = await this.lockMember(manager, organizationId, userId);
        if (member.role === 'owner') throw new ConflictError(leaving ? OWNER_CANNOT_LEAVE : OWNER_NOT_REMOVED);
        await this.memberships.delete(manager, organizationId, userId);
        revokedKeys = await this.apiKeys.revokeAllOf(manager, organizationId, userId, audit);
        await this.record(
          manager,
          organizationId,
          leaving ? 'member.left' : 'member.removed',
          userId,
          { role: member.role, api_keys_revoked: revokedKeys.length },
          audit,
        );
        return this.users.ensureOwnOrganization(manager, userId);
      });
      if (ownOrganization) {
        this.roles.forget(ownOrganization, userId);
        this.accounts.forget(userId);
      }
    } finally {
      this.roles.forget(organizationId, userId);
      this.apiKeys.forget(revokedKeys);
    }
  }

  /** The owner hands the organization to another member, and becomes an admin. */
  async transferOwnership(caller: Principal, userId: string, audit: TeamAuditContext): Promise<MemberRow> {
    const organizationId = caller.organizationId;
    if (userId === caller.userId) throw new BadRequestError(ALREADY_OWNER);
    try {
      return await this.dataSource.transaction(async (manager) => {
        const owner = await this.lockMember(manager, organizationId, caller.userId);
        // The guard read the role from the cache: the locked row decides.
        if (owner.role !== 'owner') throw new PermissionDeniedError();
        const member = await this.lockMember(manager, organizationId, userId);
        // One owner at a time (the partial unique index): the old one steps down first.
        await this.memberships.setRole(manager, organizationId, caller.userId, 'admin');
        await this.memberships.setRole(manager, organizationId, userId, 'owner');
        await manager.query('UPDATE organizations SET owner_id = $2 WHERE id = $1', [organizationId, userId]);
        await this.record(
          manager,
          organizationId,
          'ownership.transferred',
          userId,
          { owner: [caller.userId, userId], role: [member.role, 'owner'] },
          audit,
        );
        return { ...member, role: 'owner' as const };
      });
    } finally {
      this.roles.forget(organizationId, caller.userId);
      this.roles.forget(organizationId, userId);
    }
  }

  async invite(
    caller: Principal,
    input: { email: string; role: AssignableRole },
    audit: TeamAuditContext,
  ): Promise<{ invitation: InvitationRow; token: string }> {
    const organizationId = caller.organizationId;
    const email = input.email.toLowerCase();
    const token = newInvitationToken();
    const invitation = await this.dataSource.transaction(async (manager) => {
      await this.invitations.lockOrganization(manager, organizationId);
      if (await this.memberships.hasMemberWithEmail(manager, organizationId, email))
        throw new ConflictError(ALREADY_MEMBER);
      if (await this.invitations.hasPendingFor(manager, organizationId, email))
        throw new ConflictError(ALREADY_INVITED);
      if ((await this.invitations.countPending(manager, organizationId)) >= MAX_PENDING_INVITATIONS)
        throw new BadRequestError(TOO_MANY_INVITATIONS);
      const created = await this.invitations.insert(
        manager,
        { organizationId, email, role: input.role, tokenHash: hashInvitationToken(token), invitedBy: caller.userId },
        INVITATION_VALID_DAYS,
      );
      await this.record(
        manager,
        organizationId,
        'member.invited',
        null,
        { email, role: input.role, invitation_id: created.id },
        audit,
      );
      return created;
    });
    return { invitation, token };
  }

  listInvitations(caller: Principal, page: { limit: number; offset: number }): Promise<[InvitationRow[], number]> {
    return this.invitations.pagePending(caller.organizationId, page);
  }

  async revokeInvitation(caller: Principal, id: string, audit: TeamAuditContext): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const revoked = await this.invitations.revokePending(manager, caller.organizationId, id);
      if (!revoked) throw NotFoundError.named('Invitation', id);
      await this.record(
        manager,
        caller.organizationId,
        'invitation.revoked',
        null,
        { email: revoked.email, role: revoked.role, invitation_id: revoked.id },
        audit,
      );
    });
  }

  /**
   * Joins the invitation's organization with its role, once, for the user whose e-mail it names. The
   * token is checked before the e-mail: a token that works for nobody says nothing about its address.
   */
  async accept(
    caller: Principal,
    token: string,
    audit: TeamAuditContext,
  ): Promise<{ organization_id: string; role: AssignableRole }> {
    if (!INVITATION_TOKEN.test(token)) throw new BadRequestError(INVITATION_INVALID);
    const account = await this.accounts.get(caller.userId);
    const joined = await this.dataSource.transaction(async (manager) => {
      const invitation = await this.invitations.lockByHash(manager, hashInvitationToken(token));
      if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expired)
        throw new BadRequestError(INVITATION_INVALID);
      if (account?.email.toLowerCase() !== invitation.email) throw new PermissionDeniedError();
      if (await this.memberships.lock(manager, invitation.organization_id, caller.userId))
        throw new ConflictError(ALREADY_JOINED);
      await this.memberships.insert(manager, invitation.organization_id, caller.userId, invitation.role);
      await this.invitations.markAccepted(manager, invitation.id, caller.userId);
      await this.record(
        manager,
        invitation.organization_id,
        'member.joined',
        caller.userId,
        { role: invitation.role, invitation_id: invitation.id },
        audit,
      );
      return { organization_id: invitation.organization_id, role: invitation.role };
    });
    // A "not a member" this instance may have cached (other instances hear the announcement).
    this.roles.forget(joined.organization_id, caller.userId);
    return joined;
  }

  private async lockMember(manager: EntityManager, organizationId: string, userId: string): Promise<MemberRow> {
    const member = await this.memberships.lock(manager, organizationId, userId);
    if (!member) throw NotFoundError.named('Member', userId);
    return member;
  }

  private record(
    manager: EntityManager,
    organizationId: string,
    action: MembershipAction,
    targetUserId: string | null,
    changes: Record<string, unknown> | null,
    audit: TeamAuditContext,
  ): Promise<void> {
    return this.events.record(manager, { organizationId, action, targetUserId, changes }, audit);
  }
}
