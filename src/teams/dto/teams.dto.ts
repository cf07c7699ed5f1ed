import { ApiProperty } from '@nestjs/swagger';
import { isEmail } from 'class-validator';
import { echoed } from '../../common/errors.js';
import { ASSIGNABLE_ROLES, type AssignableRole } from '../../common/roles.js';
import { fieldRule, REQUIRED, StringField, unstorableText, UuidField } from '../../common/validation.js';

/** The 400 of `role: "owner"` in an invitation or a role change: ownership only moves by a transfer. */
export const OWNER_NOT_ASSIGNABLE =
  '"owner" is not a valid choice: ownership moves only by POST /v1/organizations/current/transfer-ownership/.';

/** `admin`, `member` or `viewer`; `owner` gets its own message. */
function AssignableRoleField() {
  return (target: object, property: string) => {
    ApiProperty({ type: 'string', enum: ASSIGNABLE_ROLES, example: 'member' })(target, property);
    fieldRule('assignableRole', (value) => {
      if (value === undefined || value === null) return REQUIRED;
      if (value === 'owner') return OWNER_NOT_ASSIGNABLE;
      return (ASSIGNABLE_ROLES as readonly unknown[]).includes(value)
        ? null
        : `"${echoed(typeof value === 'string' ? value : JSON.stringify(value))}" is not a valid choice.`;
    })(target, property);
  };
}

export class ChangeMemberRoleDto {
  @AssignableRoleField()
  role: AssignableRole;
}

export class TransferOwnershipDto {
  /** A member of the organization, who becomes its owner (the caller becomes an admin). */
  @UuidField()
  user_id: string;
}

export class CreateInvitationDto {
  @StringField({ max: 254 })
  @fieldRule(
    'emailAddress',
    // Text StringField refuses (a lone surrogate) is left to it: isEmail would throw on it.
    (value) =>
      typeof value === 'string' && unstorableText(value) === null && !isEmail(value.trim())
        ? 'Enter a valid email address.'
        : null,
    { format: 'email' },
  )
  email: string;

  @AssignableRoleField()
  role: AssignableRole;
}

export class AcceptInvitationDto {
  /** The `inv_` token of the invitation, as shown once when it was made. */
  @StringField({ max: 100 })
  token: string;
}
