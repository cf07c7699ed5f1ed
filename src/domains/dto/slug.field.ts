import { ApiParam } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { BLANK, fieldRule, REQUIRED } from '../../common/validation.js';

export const SLUG_PATTERN = /^[a-z0-9-]{1,50}$/;
export const SLUG_MAX = 50;
export const SLUG_SCHEMA = { type: 'string' as const, pattern: SLUG_PATTERN.source, maxLength: SLUG_MAX };
const INVALID = 'Enter a valid "slug" consisting of lowercase letters, numbers or hyphens, at most 50 characters.';

/** A slug naming a region or domain (DRF's wording for required, blank and invalid values). */
export function SlugField(rule: { optional?: boolean; nullable?: boolean } = {}) {
  return (target: object, propertyName: string) => {
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))(
      target,
      propertyName,
    );
    fieldRule(
      'slugField',
      (value) => {
        if (value === undefined) return rule.optional ? null : REQUIRED;
        if (value === null) return rule.nullable ? null : 'This field may not be null.';
        if (typeof value !== 'string') return 'Not a valid string.';
        if (value === '') return rule.optional ? BLANK : REQUIRED;
        return SLUG_PATTERN.test(value) ? null : INVALID;
      },
      { ...SLUG_SCHEMA, required: !rule.optional },
    )(target, propertyName);
  };
}

/** A path slug of a region or domain (one that cannot exist is a 404). */
export const ApiSlugParam = (name: string, description: string) =>
  ApiParam({ name, description, schema: { ...SLUG_SCHEMA, example: 'medicine' } });
