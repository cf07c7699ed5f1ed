import { ApiPropertyOptional } from '@nestjs/swagger';
import { fieldRule, StringField } from '../../common/validation.js';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';

export const MAX_ALLOWED_DOMAINS = 500;

/** Absent (unchanged), null (no restriction), or a list of domain slugs. */
function AllowedDomainsField() {
  return fieldRule(
    'allowedDomains',
    (value) => {
      if (value === undefined || value === null) return null;
      if (!Array.isArray(value)) return 'Expected a list of domain slugs, or null for no restriction.';
      if (value.some((slug) => typeof slug !== 'string' || slug.trim() === ''))
        return 'Each entry must be a domain slug.';
      return value.length > MAX_ALLOWED_DOMAINS
        ? `Ensure this list has no more than ${MAX_ALLOWED_DOMAINS} entries.`
        : null;
    },
    { type: 'array', items: SLUG_SCHEMA, maxItems: MAX_ALLOWED_DOMAINS, nullable: true, required: false },
  );
}

export class UpdateOrganizationDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 100, description: 'Absent: unchanged. May not be null or blank.' })
  @StringField({ optional: true, notNull: true, max: 100 })
  name?: string;

  @ApiPropertyOptional({
    type: 'string',
    isArray: true,
    nullable: true,
    maxLength: SLUG_SCHEMA.maxLength,
    pattern: SLUG_SCHEMA.pattern,
    maxItems: MAX_ALLOWED_DOMAINS,
    description:
      'Absent: unchanged. Null: no restriction. A list of existing domain slugs: only those (an empty list allows no public domain).',
    example: ['medicine', 'law'],
  })
  @AllowedDomainsField()
  allowed_domains?: string[] | null;
}
