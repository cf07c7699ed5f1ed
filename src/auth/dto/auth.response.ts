import { ApiProperty } from '@nestjs/swagger';
import { TEAM_ROLES, type TeamRole } from '../../common/roles.js';

/** A compact JWS as the service issues it: three base64url parts (a few hundred characters). */
const JWT = { type: 'string', maxLength: 2048, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' } as const;

/** `POST /auth/jwt/create/` (spec 2.2). */
export class TokenPairResponse {
  @ApiProperty({ ...JWT, description: 'JWT access token (30 minutes): send it as `Authorization: Bearer <access>`.' })
  access: string;

  @ApiProperty({ ...JWT, description: 'JWT refresh token (30 days): only for `POST /auth/jwt/refresh/`.' })
  refresh: string;
}

/** `POST /auth/jwt/refresh/`. */
export class AccessTokenResponse {
  @ApiProperty({ ...JWT, description: 'A new JWT access token (30 minutes).' })
  access: string;

  @ApiProperty({
    ...JWT,
    required: false,
    description:
      'Only when the service rotates refresh tokens (`JWT_ROTATE_REFRESH_TOKENS=true`): a new refresh token (30 days). ' +
      'The one sent is then spent: presenting it again revokes every token of its sign-in.',
  })
  refresh?: string;
}

/** `POST /auth/users/`. */
export class RegisteredUserResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', format: 'email', description: 'Stored lower-cased.', example: 'ada@example.com' })
  email: string;
}

/** How many organizations `GET /auth/users/me/` lists at most. */
export const ORGANIZATIONS_LISTED_MAX = 1000;

/** One of the caller's organizations, in `GET /auth/users/me/`. */
export class UserOrganizationResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: 100 })
  name: string;

  @ApiProperty({ type: 'string', enum: TEAM_ROLES })
  role: TeamRole;
}

/** `GET /auth/users/me/`. */
export class CurrentUserResponse extends RegisteredUserResponse {
  @ApiProperty({ type: 'boolean', description: 'A platform administrator (whichever credential was used).' })
  is_admin: boolean;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    description:
      'The organization the credential acts in (for a user who never switched: the one created with the account).',
  })
  organization_id: string;

  @ApiProperty({ type: 'string', enum: TEAM_ROLES, description: 'The role in that organization.' })
  role: TeamRole;

  @ApiProperty({
    type: () => [UserOrganizationResponse],
    maxItems: ORGANIZATIONS_LISTED_MAX,
    description: `Every organization the user belongs to (its own first, then by name; the first ${ORGANIZATIONS_LISTED_MAX}).`,
  })
  organizations: UserOrganizationResponse[];
}
