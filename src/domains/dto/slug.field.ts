import { Transform } from 'class-transformer';
import { registerDecorator } from 'class-validator';
import { REQUIRED } from '../../common/validation.js';

export const SLUG_PATTERN = /^[a-z0-9-]{1,50}$/;
const INVALID = 'Enter a valid "slug" consisting of lowercase letters, numbers or hyphens, at most 50 characters.';

/** A slug naming a region or domain (DRF's wording for required, blank and invalid values). */
export function SlugField(rule: { optional?: boolean; nullable?: boolean } = {}) {
  return (target: object, propertyName: string) => {
    Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))(target, propertyName);
    let message = '';
    registerDecorator({
      name: 'slugField',
      target: target.constructor,
      propertyName,
      options: { message: () => message },
      validator: {
        validate(value: unknown) {
          message = '';
          if (value === undefined) message = rule.optional ? '' : REQUIRED;
          else if (value === null) message = rule.nullable ? '' : 'This field may not be null.';
          else if (typeof value !== 'string') message = 'Not a valid string.';
          else if (value === '') message = 'This field may not be blank.';
          else if (!SLUG_PATTERN.test(value)) message = INVALID;
          return message === '';
        },
      },
    });
  };
}
