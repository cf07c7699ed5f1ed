import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  getSchemaPath,
} from '@nestjs/swagger';
import { ApiKeyResponse } from '../api-keys/dto/api-key.response.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { Audit, type AuditContext } from '../api-keys/audit-context.js';
import { Authenticated, CurrentPrincipal, JwtOnly } from '../common/auth.decorators.js';
import { BadRequestError, ConflictError, ValidationFailedError } from '../common/errors.js';
import { NoStore } from '../common/no-store.decorator.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { toIsoMicros } from '../common/timestamps.js';
import { UuidPathPipe } from '../common/validation.js';
import { INVITATION_WITHHELD_NOTICE, WithheldInReplay } from '../idempotency/withheld-in-replay.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { ApiPagination } from '../openapi/page.response.js';
import type { MemberRow } from '../organizations/memberships.repository.js';
import {
  AcceptInvitationDto,
  ChangeMemberRoleDto,
  CreateInvitationDto,
  OWNER_NOT_ASSIGNABLE,
  TransferOwnershipDto,
} from './dto/teams.dto.js';
import {
  AcceptedInvitationResponse,
  CreatedInvitationResponse,
  InvitationPage,
  MemberPage,
  MemberResponse,
  MemberUsageResponse,
  OrganizationEventPage,
  OrganizationKeyPage,
} from './dto/teams.response.js';
import type { InvitationRow } from './invitations.repository.js';
import {
  MEMBERS_USAGE_MAX,
  MembershipEventsRepository,
  type OrganizationEventRow,
} from './membership-events.repository.js';
import {
  ALREADY_INVITED,
  ALREADY_JOINED,
  ALREADY_MEMBER,
  ALREADY_OWNER,
  INVITATION_INVALID,
  MAX_PENDING_INVITATIONS,
  OWNER_CANNOT_LEAVE,
  OWNER_NOT_DEMOTED,
  OWNER_NOT_REMOVED,
  TeamsService,
  TOO_MANY_INVITATIONS,
} from './teams.service.js';
import { CURRENT_PERIOD_SQL } from '../billing/billing-period.js';
import { ApiController } from '../openapi/api-controller.js';

const presentMember = (member: MemberRow) => ({
  user_id: member.user_id,
  email: member.email,
  role: member.role,
  joined_at: toIsoMicros(member.joined_at),
});

const presentInvitation = (invitation: InvitationRow) => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  created_at: toIsoMicros(invitation.created_at),
  expires_at: toIsoMicros(invitation.expires_at),
});

const presentEvent = (event: OrganizationEventRow) => ({
  id: event.id,
  action: event.action,
  actor_user_id: event.actor_user_id,
  target_user_id: event.target_user_id,
  changes: event.changes,
  request_id: event.request_id,
  ip: event.ip,
  created_at: toIsoMicros(event.created_at),
  key_id: event.key_id,
  key_prefix: event.key_prefix,
});

const USER_ID = () => ApiUuidParam('userId', "The member's user id.");
const OWNER_ROLE_400 = {
  description: '`role` missing or not `admin`, `member` or `viewer` (`owner` moves only by a transfer).',
  bodies: { ownerRole: ValidationFailedError.field('role', OWNER_NOT_ASSIGNABLE).body() },
};

/**
 * Teams (CONTRACT, third edition): the members of the caller's active organization, their roles,
 * invitations, every key of the organization and its audit log. Each route declares the lowest role
 * that may call it (the permission table); writes by API key need the scope `organization:write`.
 */
@ApiController('teams')
@Controller('v1/organizations/current')
export class TeamsController {
  constructor(
    private readonly teams: TeamsService,
    private readonly apiKeys: ApiKeysService,
    private readonly events: MembershipEventsRepository,
  ) {}

  @Get('members')
  @Authenticated({ role: 'viewer' })
  @ApiOperation({ summary: 'The members of the organization: the owner first, then by the date they joined' })
  @ApiPagination()
  @ApiOkResponse({ type: MemberPage })
  async listMembers(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }) {
    const [members, count] = await this.teams.listMembers(caller, page);
    return toPage(page, count, members.map(presentMember));
  }

  @Patch('members/:userId')
  @Authenticated({ role: 'admin', scope: 'organization:write' })
  @USER_ID()
  @ApiOperation({
    summary: "Change a member's role (`admin`, `member` or `viewer`)",
    description:
      "Takes effect at once for the member's access tokens and API keys, on every instance within a second. The owner's role is changed only by a transfer.",
  })
  @ApiOkResponse({ type: MemberResponse })
  @ApiErrors({
    400: OWNER_ROLE_400,
    403: {
      description: 'The caller is neither an admin nor the owner.',
      examples: ['permissionDenied', 'missingScope'],
    },
    404: 'No member with that user id in this organization.',
    409: { description: 'The member is the owner.', bodies: { owner: new ConflictError(OWNER_NOT_DEMOTED).body() } },
  })
  async changeMemberRole(
    @CurrentPrincipal() caller: Principal,
    @Param('userId', new UuidPathPipe('Member')) userId: string,
    @Body() body: ChangeMemberRoleDto,
    @Audit() audit: AuditContext,
  ) {
    return presentMember(await this.teams.changeRole(caller, userId, body.role, audit));
  }

  @Delete('members/:userId')
  @HttpCode(204)
  @Authenticated({ role: 'viewer', scope: 'organization:write' })
  @USER_ID()
  @ApiOperation({
    summary: 'Remove a member, or leave (your own user id)',
    description:
      "Removing another member takes an admin or the owner; any member but the owner may leave. The member's API keys in this organization are revoked and its tokens stop acting here, on every instance within a second.",
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors({
    403: {
      description: 'Removing someone else without being an admin or the owner.',
      examples: ['permissionDenied', 'missingScope'],
    },
    404: 'No member with that user id in this organization.',
    409: {
      description: 'The member is the owner (who can neither be removed nor leave).',
      bodies: {
        ownerRemoved: new ConflictError(OWNER_NOT_REMOVED).body(),
        ownerLeaving: new ConflictError(OWNER_CANNOT_LEAVE).body(),
      },
    },
  })
  async removeMember(
    @CurrentPrincipal() caller: Principal,
    @Param('userId', new UuidPathPipe('Member')) userId: string,
    @Audit() audit: AuditContext,
  ): Promise<void> {
    await this.teams.remove(caller, userId, audit);
  }

  @Post('transfer-ownership')
  @HttpCode(200)
  @JwtOnly('owner')
  @ApiOperation({
    summary: 'Make another member the owner; you become an admin',
    description: 'The owner only, with a JWT.',
  })
  @ApiOkResponse({ type: MemberResponse, description: 'The new owner.' })
  @ApiErrors({
    400: {
      description: '`user_id` missing or not a UUID, or your own.',
      bodies: { self: new BadRequestError(ALREADY_OWNER).body() },
    },
    404: 'No member with that user id in this organization.',
  })
  async transferOwnership(
    @CurrentPrincipal() caller: Principal,
    @Body() body: TransferOwnershipDto,
    @Audit() audit: AuditContext,
  ) {
    return presentMember(await this.teams.transferOwnership(caller, body.user_id.toLowerCase(), audit));
  }

  @Post('invitations')
  @NoStore()
  @WithheldInReplay('token', INVITATION_WITHHELD_NOTICE)
  @Authenticated({ role: 'admin', scope: 'organization:write' })
  @ApiOperation({
    summary: 'Invite someone by e-mail, with a role',
    description:
      'Answers the `inv_` token once (only its hash is kept); it is valid for 7 days and accepted with `POST /v1/invitations/accept/` by the user whose e-mail it names.',
  })
  @ApiCreatedResponse({ type: CreatedInvitationResponse })
  @ApiErrors({
    400: {
      description: `A bad field (\`owner\` is not a role one is invited to), or already ${MAX_PENDING_INVITATIONS} pending invitations.`,
      bodies: {
        ownerRole: ValidationFailedError.field('role', OWNER_NOT_ASSIGNABLE).body(),
        tooMany: new BadRequestError(TOO_MANY_INVITATIONS).body(),
      },
    },
    403: {
      description: 'The caller is neither an admin nor the owner.',
      examples: ['permissionDenied', 'missingScope'],
    },
    409: {
      description: 'The e-mail is already a member, or already has a pending invitation.',
      bodies: {
        member: new ConflictError(ALREADY_MEMBER).body(),
        invited: new ConflictError(ALREADY_INVITED).body(),
      },
    },
  })
  async createInvitation(
    @CurrentPrincipal() caller: Principal,
    @Body() body: CreateInvitationDto,
    @Audit() audit: AuditContext,
  ) {
    const { invitation, token } = await this.teams.invite(caller, { email: body.email, role: body.role }, audit);
    return { ...presentInvitation(invitation), token };
  }

  @Get('invitations')
  @Authenticated({ role: 'admin' })
  @ApiOperation({ summary: 'The pending invitations (neither accepted, revoked nor expired), newest first' })
  @ApiPagination()
  @ApiOkResponse({ type: InvitationPage })
  async listInvitations(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }) {
    const [invitations, count] = await this.teams.listInvitations(caller, page);
    return toPage(page, count, invitations.map(presentInvitation));
  }

  @Delete('invitations/:invitationId')
  @HttpCode(204)
  @Authenticated({ role: 'admin', scope: 'organization:write' })
  @ApiUuidParam('invitationId', 'A pending invitation of this organization.')
  @ApiOperation({ summary: 'Revoke a pending invitation: its token no longer works' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors({
    403: {
      description: 'The caller is neither an admin nor the owner.',
      examples: ['permissionDenied', 'missingScope'],
    },
    404: 'No pending invitation with that id in this organization.',
  })
  async revokeInvitation(
    @CurrentPrincipal() caller: Principal,
    @Param('invitationId', new UuidPathPipe('Invitation')) id: string,
    @Audit() audit: AuditContext,
  ): Promise<void> {
    await this.teams.revokeInvitation(caller, id, audit);
  }

  @Get('api-keys')
  @JwtOnly('admin')
  @ApiOperation({ summary: 'Every API key of the organization, newest first, with who made it' })
  @ApiPagination()
  @ApiOkResponse({ type: OrganizationKeyPage })
  async listOrganizationKeys(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }) {
    const { keys, count } = await this.apiKeys.listOrganization(caller.organizationId, page);
    return toPage(page, count, keys);
  }

  @Post('api-keys/:keyId/revoke')
  @HttpCode(200)
  @JwtOnly('admin')
  @ApiUuidParam('keyId', 'Any key of the organization.')
  @ApiOperation({ summary: 'Revoke any key of the organization' })
  @ApiOkResponse({ type: ApiKeyResponse, description: 'The key, with `is_active: false`.' })
  @ApiErrors({ 404: 'No key with that id in this organization.' })
  revokeOrganizationKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', new UuidPathPipe('API key')) keyId: string,
    @Audit() audit: AuditContext,
  ) {
    return this.apiKeys.revoke({ organizationId: caller.organizationId }, keyId, audit);
  }

  @Get('events')
  @JwtOnly('admin')
  @ApiOperation({
    summary: "The organization's audit log: its key events and membership events, newest first",
    description:
      "A key event's `action` is `api_key.` and the key log's action (`created`, `updated`, `rotated`, `revoked`).",
  })
  @ApiPagination()
  @ApiOkResponse({ type: OrganizationEventPage })
  async listOrganizationEvents(
    @CurrentPrincipal() caller: Principal,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<ReturnType<typeof presentEvent>>> {
    const [events, count] = await this.events.page(caller.organizationId, page);
    return toPage(page, count, events.map(presentEvent));
  }
}

/** `POST /v1/invitations/accept/`: the invited user joins, with its own JWT. */
@ApiController('teams')
@Controller('v1/invitations')
export class InvitationAcceptController {
  constructor(private readonly teams: TeamsService) {}

  @Post('accept')
  @HttpCode(200)
  @JwtOnly('viewer')
  @ApiOperation({
    summary: 'Accept an invitation: join its organization with its role',
    description: 'With the JWT of the user whose e-mail (case-insensitive) the invitation names; once.',
  })
  @ApiOkResponse({ type: AcceptedInvitationResponse })
  @ApiErrors({
    400: {
      description: 'The token is unknown, used, revoked or expired.',
      bodies: { invalid: new BadRequestError(INVITATION_INVALID).body() },
    },
    403: "The invitation is for another user's e-mail.",
    409: {
      description: 'Already a member of that organization.',
      bodies: { member: new ConflictError(ALREADY_JOINED).body() },
    },
  })
  acceptInvitation(
    @CurrentPrincipal() caller: Principal,
    @Body() body: AcceptInvitationDto,
    @Audit() audit: AuditContext,
  ) {
    return this.teams.accept(caller, body.token, audit);
  }
}

/** `GET /v1/billings/usage/members/`: this period's spend per member. */
@ApiController('billing')
@ApiExtraModels(MemberUsageResponse)
@Controller('v1/billings/usage/members')
export class MemberUsageController {
  constructor(private readonly events: MembershipEventsRepository) {}

  @Get()
  @Authenticated({ role: 'viewer', scope: 'usage:read' })
  @ApiOperation({
    summary: "This period's requests and credits of each member (a key's count for the member who made it)",
  })
  @ApiOkResponse({
    schema: { type: 'array', maxItems: MEMBERS_USAGE_MAX, items: { $ref: getSchemaPath(MemberUsageResponse) } },
    description: `Each member (the first ${MEMBERS_USAGE_MAX}), the biggest spender first.`,
  })
  usageByMember(@CurrentPrincipal() caller: Principal) {
    return this.events.usageByMember(caller.organizationId, CURRENT_PERIOD_SQL);
  }
}
