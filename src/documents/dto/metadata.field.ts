import { AsParsed, type FieldSchema, fieldRule, unstorableText } from '../../common/validation.js';

const MAX_KEYS = 50;
const MAX_KEY_LENGTH = 100;
const MAX_VALUE_LENGTH = 1000;
export const METADATA_MESSAGE = 'Must be a flat JSON object whose values are strings or numbers.';

/** Null when `value` is acceptable document metadata, else the reason. */
export function metadataProblem(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return METADATA_MESSAGE;
  const entries = Object.entries(value);
  if (entries.length > MAX_KEYS) return `Ensure this object has no more than ${MAX_KEYS} keys.`;
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) return `Keys must be 1 to ${MAX_KEY_LENGTH} characters long.`;
    const unstorable = unstorableText(key) ?? (typeof item === 'string' ? unstorableText(item) : null);
    if (unstorable) return unstorable;
    if (typeof item === 'number' ? !Number.isFinite(item) : typeof item !== 'string') return METADATA_MESSAGE;
    if (typeof item === 'string' && item.length > MAX_VALUE_LENGTH)
      return `Ensure each value has no more than ${MAX_VALUE_LENGTH} characters.`;
  }
  return null;
}

/** Optional `metadata`: a flat object of strings and finite numbers, small enough to return with every source. */
export function MetadataField() {
  // An object schema's own `required` is a list of keys; the property's is the flag.
  const rule = fieldRule('metadataField', metadataProblem, {
    ...METADATA_OBJECT,
    nullable: true,
    required: false,
  } as FieldSchema);
  return (target: object, property: string) => {
    AsParsed()(target, property);
    rule(target, property);
  };
}

/** What `metadataProblem` accepts, as the OpenAPI document states it. */
export const METADATA_OBJECT: FieldSchema = {
  type: 'object',
  maxProperties: MAX_KEYS,
  additionalProperties: { oneOf: [{ type: 'string', maxLength: MAX_VALUE_LENGTH }, { type: 'number' }] },
};
