import { ApiProperty } from '@nestjs/swagger';
import { ApiKeyResponse } from '../../api-keys/dto/api-key.response.js';
import { ASSIGNABLE_ROLES, TEAM_ROLES, type AssignableRole, type TeamRole } from '../../common/roles.js';
import { INVITATION_WITHHELD_NOTICE } from '../../idempotency/withheld-in-replay.js';
import { COUNT, CREDITS } from '../../openapi/limits.js';
import { PageOf } from '../../openapi/page.response.js';

const TIMESTAMP = { type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' } as const;

export class MemberResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  user_id: string;

  @ApiProperty({ type: 'string', format: 'email', example: 'grace@example.com' })
  email: string;

  @ApiProperty({ type: 'string', enum: TEAM_ROLES, example: 'member' })
  role: TeamRole;

  @ApiProperty(TIMESTAMP)
  joined_at: string;
}

export const MemberPage = PageOf(MemberResponse, 'MemberPage');

export class InvitationResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', format: 'email', example: 'grace@example.com' })
  email: string;

  @ApiProperty({ type: 'string', enum: ASSIGNABLE_ROLES, example: 'member' })
  role: AssignableRole;

  @ApiProperty(TIMESTAMP)
  created_at: string;

  @ApiProperty({ ...TIMESTAMP, description: 'Seven days after `created_at`.' })
  expires_at: string;
}

export class CreatedInvitationResponse extends InvitationResponse {
  @ApiProperty({
    type: 'string',
    pattern: '^inv_[0-9A-Za-z]{32}$',
    maxLength: 36,
    example: 'inv_4Zq8RkT2mW9xLp3Vn7Bc1Hd6Jf0Gs5Ya',
    required: false,
    description:
      'Shown this once, never again (only a hash is kept): give it to the invited person. Absent from an `Idempotency-Key` replay, which carries `token_withheld` instead.',
  })
  token?: string;

  @ApiProperty({
    type: 'string',
    required: false,
    maxLength: 200,
    description: `Only in an \`Idempotency-Key\` replay, instead of \`token\`: "${INVITATION_WITHHELD_NOTICE}"`,
  })
  token_withheld?: string;
}

export const InvitationPage = PageOf(InvitationResponse, 'InvitationPage');

export class AcceptedInvitationResponse {
  @ApiProperty({
    type: 'string',
    format: 'uuid',
    description: 'The organization joined: switch to it with `POST /auth/jwt/switch/`.',
  })
  organization_id: string;

  @ApiProperty({ type: 'string', enum: ASSIGNABLE_ROLES, example: 'member' })
  role: AssignableRole;
}

export class KeyCreatorResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  user_id: string;

  @ApiProperty({ type: 'string', format: 'email', nullable: true, example: 'grace@example.com' })
  email: string | null;
}

export class OrganizationKeyResponse extends ApiKeyResponse {
  @ApiProperty({ type: KeyCreatorResponse, description: 'The member who made the key.' })
  created_by: KeyCreatorResponse;
}

export const OrganizationKeyPage = PageOf(OrganizationKeyResponse, 'OrganizationKeyPage');

export class OrganizationEventResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({
    type: 'string',
    maxLength: 40,
    example: 'member.role_changed',
    description:
      'A membership event (`member.invited`, `member.joined`, `member.role_changed`, `member.removed`, `member.left`, `invitation.revoked`, `ownership.transferred`) or a key event (`api_key.created`, `api_key.updated`, `api_key.rotated`, `api_key.revoked`).',
  })
  action: string;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'Who made the change.' })
  actor_user_id: string | null;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'The member it was about, if any.' })
  target_user_id: string | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    example: { role: ['member', 'admin'] },
    description: 'What changed (`[before, after]` for a change).',
  })
  changes: Record<string, unknown> | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 200 })
  request_id: string | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 64 })
  ip: string | null;

  @ApiProperty(TIMESTAMP)
  created_at: string;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'A key event: the key acted on.' })
  key_id: string | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 12, description: 'A key event: its prefix.' })
  key_prefix: string | null;
}

export const OrganizationEventPage = PageOf(OrganizationEventResponse, 'OrganizationEventPage');

export class MemberUsageResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  user_id: string;

  @ApiProperty({ type: 'string', format: 'email' })
  email: string;

  @ApiProperty({ ...COUNT, description: 'Metered requests this period (with the keys the member made).' })
  requests: number;

  @ApiProperty({ ...CREDITS, description: 'Credits they spent this period.' })
  credits: number;
}
