import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { echoed } from '../../common/errors.js';
import { AsParsed, fieldRule, StringField, unstorableText } from '../../common/validation.js';

export const NAME_MAX = 100;
export const DESCRIPTION_MAX = 2000;
const METADATA_MAX_KEYS = 16;
const METADATA_KEY_MAX = 40;
const METADATA_VALUE_MAX = 500;

/** Null when `value` is acceptable collection metadata (absent or null count), else what is wrong. */
function metadataProblem(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return 'Expected an object of strings and numbers.';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_MAX_KEYS) return `Ensure this object has no more than ${METADATA_MAX_KEYS} keys.`;
  for (const [key, item] of entries) {
    if (key.length < 1 || key.length > METADATA_KEY_MAX)
      return `Keys must be 1 to ${METADATA_KEY_MAX} characters long.`;
    const unstorable = unstorableText(key) ?? (typeof item === 'string' ? unstorableText(item) : null);
    if (unstorable) return unstorable;
    if (typeof item !== 'string' && !(typeof item === 'number' && Number.isFinite(item)))
      return `"${echoed(key)}" must be a string or a number (metadata is flat).`;
    if (typeof item === 'string' && item.length > METADATA_VALUE_MAX)
      return `Ensure each value has no more than ${METADATA_VALUE_MAX} characters.`;
  }
  return null;
}

function CollectionMetadataField() {
  const rule = fieldRule('collectionMetadata', metadataProblem, {
    type: 'object',
    maxProperties: METADATA_MAX_KEYS,
    additionalProperties: { oneOf: [{ type: 'string', maxLength: METADATA_VALUE_MAX }, { type: 'number' }] },
    nullable: true,
    selfRequired: false,
    description: `Your own labels: a flat object of strings and numbers, at most ${METADATA_MAX_KEYS} keys. \`{}\` when none.`,
    example: { customer_id: 'cus_8f2k' },
  });
  return (target: object, property: string) => {
    AsParsed()(target, property);
    rule(target, property);
  };
}

export class CreateCollectionDto {
  @ApiProperty({
    type: 'string',
    maxLength: NAME_MAX,
    description: 'Unique in the organization (compared without regard to case).',
    example: 'Support tickets',
  })
  @StringField({ max: NAME_MAX })
  name: string;

  @ApiPropertyOptional({ type: 'string', maxLength: DESCRIPTION_MAX, nullable: true, example: 'Tickets of 2026' })
  @StringField({ max: DESCRIPTION_MAX, optional: true })
  description?: string | null;

  @CollectionMetadataField()
  metadata?: Record<string, string | number> | null;
}

export class UpdateCollectionDto {
  @ApiPropertyOptional({
    type: 'string',
    maxLength: NAME_MAX,
    description: 'A new name (`default` cannot be renamed: 409).',
    example: 'Support tickets 2026',
  })
  @StringField({ max: NAME_MAX, optional: true, notNull: true })
  name?: string;

  @ApiPropertyOptional({ type: 'string', maxLength: DESCRIPTION_MAX, nullable: true, example: 'Tickets of 2026' })
  @StringField({ max: DESCRIPTION_MAX, optional: true })
  description?: string | null;

  @CollectionMetadataField()
  metadata?: Record<string, string | number> | null;
}
