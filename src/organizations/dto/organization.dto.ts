import { registerDecorator } from 'class-validator';
import { StringField } from '../../common/validation.js';

/** Absent (unchanged), null (no restriction), or a list of domain slugs. */
function AllowedDomainsField() {
  return (target: object, propertyName: string) => {
    let message = '';
    registerDecorator({
      name: 'allowedDomains',
      target: target.constructor,
      propertyName,
      options: { message: () => message },
      validator: {
        validate(value: unknown) {
          message = '';
          if (value === undefined || value === null) return true;
          if (!Array.isArray(value)) message = 'Expected a list of domain slugs, or null for no restriction.';
          else if (value.some((slug) => typeof slug !== 'string' || slug.trim() === '')) message = 'Each entry must be a domain slug.';
          else if (value.length > 500) message = 'Ensure this list has no more than 500 entries.';
          return message === '';
        },
      },
    });
  };
}

export class UpdateOrganizationDto {
  @StringField({ optional: true, notNull: true, max: 100 })
  name?: string;

  @AllowedDomainsField()
  allowed_domains?: string[] | null;
}
