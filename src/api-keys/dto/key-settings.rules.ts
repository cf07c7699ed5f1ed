import { ApiProperty } from '@nestjs/swagger';
import { echoed } from '../../common/errors.js';
import { API_KEY_SCOPES, isApiKeyScope } from '../../common/scopes.js';
import { fieldRule, IntegerField, integerSchema, unstorableText } from '../../common/validation.js';
import {
  METADATA_KEY_MAX_LENGTH,
  METADATA_MAX_BYTES,
  METADATA_MAX_KEYS,
  MONTHLY_CREDIT_LIMIT_MAX,
  RATE_LIMIT_PER_MINUTE_MAX,
} from '../key-settings.js';

/** A list of distinct known scopes, or null (every scope). */
export function ScopesField() {
  return fieldRule(
    'scopes',
    (value) => {
      if (value === undefined || value === null) return null;
      if (!Array.isArray(value)) return 'Expected a list of scopes.';
      const seen = new Set<unknown>();
      for (const scope of value as unknown[]) {
        if (!isApiKeyScope(scope))
          return `${echoed(JSON.stringify(scope))} is not a valid scope; valid scopes: ${API_KEY_SCOPES.join(', ')}.`;
        if (seen.has(scope)) return `"${scope}" is listed more than once.`;
        seen.add(scope);
      }
      return null;
    },
    {
      type: 'array',
      items: { type: 'string', enum: [...API_KEY_SCOPES] },
      uniqueItems: true,
      maxItems: API_KEY_SCOPES.length,
      nullable: true,
      required: false,
      description:
        'What the key may do; null (the default) means every scope. `query`: queries and chat messages; `documents:read`, `documents:write`; `chat`: chat sessions; `usage:read`: subscription and usage; `organization:write`: `PATCH /v1/organizations/current/`. JWTs are not scoped.',
      example: ['query', 'documents:read'],
    },
  );
}

export const RateLimitField = () => (target: object, property: string) => {
  ApiProperty({
    ...nullableInteger(1, RATE_LIMIT_PER_MINUTE_MAX),
    description:
      "Requests per minute for this key, up to the service's KEY_RATE_LIMIT_MAX_PER_MINUTE (6000 by default; a 400 names it beyond); null (the default) means the service's RATE_LIMIT_PER_MINUTE. The organization's ORG_RATE_LIMIT_PER_MINUTE applies across all its keys and users as well.",
    example: 600,
  })(target, property);
  IntegerField({ min: 1, max: RATE_LIMIT_PER_MINUTE_MAX })(target, property);
};

export const CreditLimitField = () => (target: object, property: string) => {
  ApiProperty({
    ...nullableInteger(0, MONTHLY_CREDIT_LIMIT_MAX),
    description:
      "Credits this key may spend per billing period (a calendar month, UTC), within the organization's quota; null (the default) means no cap of its own. 0 stops its metered requests.",
    example: 500,
  })(target, property);
  IntegerField({ min: 0, max: MONTHLY_CREDIT_LIMIT_MAX })(target, property);
};

function nullableInteger(min: number, max: number) {
  return { ...integerSchema(min, max), nullable: true, required: false };
}

/** A flat object of strings and numbers, within METADATA_MAX_KEYS keys and METADATA_MAX_BYTES of JSON. */
export function MetadataField() {
  return fieldRule(
    'metadata',
    (value) => {
      if (value === undefined) return null;
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return 'Expected an object of strings and numbers.';
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length > METADATA_MAX_KEYS) return `Ensure this object has no more than ${METADATA_MAX_KEYS} keys.`;
      for (const [key, item] of entries) {
        if (key.length < 1 || key.length > METADATA_KEY_MAX_LENGTH)
          return `Keys must be 1 to ${METADATA_KEY_MAX_LENGTH} characters long.`;
        const unstorable = unstorableText(key) ?? (typeof item === 'string' ? unstorableText(item) : null);
        if (unstorable) return unstorable;
        if (typeof item !== 'string' && !(typeof item === 'number' && Number.isFinite(item)))
          return `"${echoed(key)}" must be a string or a number (metadata is flat).`;
      }
      if (Buffer.byteLength(JSON.stringify(value)) > METADATA_MAX_BYTES)
        return `Ensure this object takes no more than ${METADATA_MAX_BYTES} bytes as JSON.`;
      return null;
    },
    {
      type: 'object',
      maxProperties: METADATA_MAX_KEYS,
      additionalProperties: { oneOf: [{ type: 'string', maxLength: METADATA_MAX_BYTES }, { type: 'number' }] },
      // An object schema's `required` lists its own properties; this says the field itself is optional.
      selfRequired: false,
      description: `Your own labels: a flat object of strings and numbers, at most ${METADATA_MAX_KEYS} keys of 1 to ${METADATA_KEY_MAX_LENGTH} characters and ${METADATA_MAX_BYTES} bytes as JSON. Stored and returned as given; \`{}\` when none.`,
      example: { customer_id: 'cus_8f2k', environment: 'production', tier: 2 },
    },
  );
}
