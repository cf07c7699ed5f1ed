import { isEmail } from 'class-validator';
import { BooleanField, fieldRule, type FieldSchema, StringField, UuidField } from '../../common/validation.js';

/** A further rule for a string field, checked once StringField found a string; `schema` adds to StringField's. */
function extraRule(name: string, schema: FieldSchema, message: (value: string) => string | null) {
  return fieldRule(name, (value) => (typeof value === 'string' ? message(value) : null), schema);
}

/** A required e-mail address (stored lower-cased). */
function EmailField() {
  return (target: object, propertyName: string) => {
    StringField({ max: 254 })(target, propertyName);
    extraRule('emailAddress', { format: 'email' }, (value) => (isEmail(value) ? null : 'Enter a valid email address.'))(
      target,
      propertyName,
    );
  };
}

/** Django's default password rules that fit an API: length, and not digits alone. */
function NewPasswordField() {
  return (target: object, propertyName: string) => {
    StringField({ noTrim: true, max: 256 })(target, propertyName);
    extraRule('newPassword', { format: 'password', minLength: 8 }, (value) => {
      if (value.length < 8) return 'This password is too short. It must contain at least 8 characters.';
      if (/^\d+$/.test(value)) return 'This password is entirely numeric.';
      return null;
    })(target, propertyName);
  };
}

export class CredentialsDto {
  @EmailField()
  email: string;

  @StringField({ noTrim: true, max: 256 })
  password: string;

  /**
   * The organization the tokens act in (one the user is a member of; otherwise 404). Default: the one
   * the user last switched to, else the user's own.
   */
  @UuidField({ optional: true })
  organization_id?: string | null;
}

/** `POST /auth/jwt/switch/`. */
export class SwitchOrganizationDto {
  /** An organization the caller is a member of; otherwise 404. */
  @UuidField()
  organization_id: string;
}

export class RegisterDto {
  @EmailField()
  email: string;

  @NewPasswordField()
  password: string;
}

export class RefreshDto {
  @StringField()
  refresh: string;
}

export class LogoutDto extends RefreshDto {
  /** true: revoke every refresh token of the user and refuse their earlier access tokens. */
  @BooleanField()
  all?: boolean;
}

export class VerifyDto {
  @StringField()
  token: string;
}
