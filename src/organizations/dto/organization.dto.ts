import { ApiPropertyOptional } from '@nestjs/swagger';
import { fieldRule, StringField } from '../../common/validation.js';

/** Absent (unchanged), null (no restriction), or a list of domain slugs. */
function AllowedDomainsField() {
  return fieldRule('allowedDomains', (value) => {
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value)) return 'Expected a list of domain slugs, or null for no restriction.';
    if (value.some((slug) => typeof slug !== 'string' || slug.trim() === '')) return 'Each entry must be a domain slug.';
    return value.length > 500 ? 'Ensure this list has no more than 500 entries.' : null;
  });
}

export class UpdateOrganizationDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 100, description: 'Absent: unchanged. May not be null or blank.' })
  @StringField({ optional: true, notNull: true, max: 100 })
  name?: string;

  @ApiPropertyOptional({
    type: 'string',
    isArray: true,
    nullable: true,
    maxItems: 500,
    description: 'Absent: unchanged. Null: no restriction. A list of existing domain slugs: only those (an empty list allows no public domain).',
    example: ['medicine', 'law'],
  })
  @AllowedDomainsField()
  allowed_domains?: string[] | null;
}
