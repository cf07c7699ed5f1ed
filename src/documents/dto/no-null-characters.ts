import { registerDecorator } from 'class-validator';

export const NULL_CHARACTERS = 'Null characters are not allowed.';

/**
 * PostgreSQL text cannot hold U+0000, so a string carrying one would fail at the database as a 500;
 * refuse it as a 400 instead, with DRF's wording.
 */
export function NoNullCharacters() {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'noNullCharacters',
      target: target.constructor,
      propertyName,
      options: { message: NULL_CHARACTERS },
      validator: { validate: (value: unknown) => typeof value !== 'string' || !value.includes('\u0000') },
    });
}
