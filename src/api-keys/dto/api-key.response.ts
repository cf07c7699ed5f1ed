import { ApiProperty } from '@nestjs/swagger';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../common/scopes.js';
import { integerSchema } from '../../common/validation.js';
import { CREDITS } from '../../openapi/limits.js';
import { API_KEY_PREFIX, checksumOf, keyPrefixOf } from '../key-format.js';
import { KEY_WITHHELD_NOTICE } from '../../idempotency/withheld-in-replay.js';
import {
  type KeyMetadata,
  METADATA_MAX_BYTES,
  METADATA_MAX_KEYS,
  MONTHLY_CREDIT_LIMIT_MAX,
  RATE_LIMIT_PER_MINUTE_MAX,
} from '../key-settings.js';

// A well-formed (checksum-valid) example that no stored key matches.
const EXAMPLE_RANDOM = '7GkQ2mZpXw4Lr9TbVc1Ns8Ud3Ye6Hf0J';
const EXAMPLE_KEY = `${API_KEY_PREFIX}${EXAMPLE_RANDOM}${checksumOf(EXAMPLE_RANDOM)}`;
const KEY_PREFIX_LENGTH = keyPrefixOf(EXAMPLE_KEY).length;

/** The API key record (spec 2.1) as `presentApiKey` returns it, without the full key. */
export class ApiKeyResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: 100, description: 'Label given at creation.', example: 'CI pipeline' })
  name: string;

  @ApiProperty({
    type: 'string',
    maxLength: KEY_PREFIX_LENGTH,
    description: '`svc_` and the first 8 random characters: identifies the key.',
    example: keyPrefixOf(EXAMPLE_KEY),
  })
  key_prefix: string;

  @ApiProperty({ type: 'boolean', description: 'False once revoked, rotated away or expired.' })
  is_active: boolean;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Null while never used; may lag up to 60 seconds.',
  })
  last_used_at: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'UTC with six fractional digits (real microseconds).',
    example: '2026-11-21T09:14:03.482913Z',
  })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Null: the key does not expire.' })
  expires_at: string | null;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...API_KEY_SCOPES] },
    maxItems: API_KEY_SCOPES.length,
    nullable: true,
    description: 'What the key may do; null: every scope.',
    example: ['query', 'documents:read'],
  })
  scopes: ApiKeyScope[] | null;

  @ApiProperty({
    ...integerSchema(1, RATE_LIMIT_PER_MINUTE_MAX),
    nullable: true,
    description: "The key's requests per minute; null: the service's RATE_LIMIT_PER_MINUTE.",
    example: 600,
  })
  rate_limit_per_minute: number | null;

  @ApiProperty({
    ...integerSchema(0, MONTHLY_CREDIT_LIMIT_MAX),
    nullable: true,
    description: "Credits the key may spend per billing period; null: no cap beyond the organization's quota.",
    example: 500,
  })
  monthly_credit_limit: number | null;

  @ApiProperty({
    ...CREDITS,
    description: 'Credits the key spent in the current billing period (0 after the period turns).',
    example: 42,
  })
  credits_used_this_period: number;

  @ApiProperty({
    type: 'object',
    maxProperties: METADATA_MAX_KEYS,
    additionalProperties: { oneOf: [{ type: 'string', maxLength: METADATA_MAX_BYTES }, { type: 'number' }] },
    description: 'Your labels, as given; `{}` when none.',
    example: { customer_id: 'cus_8f2k', environment: 'production' },
  })
  metadata: KeyMetadata;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', format: 'uuid' },
    maxItems: 20,
    nullable: true,
    description:
      'The collections the key may reach, in order (an upload without `collection_id` goes into the first); null: every collection.',
    example: null,
  })
  collection_ids: string[] | null;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The key that replaced this one when it was rotated (listed too); null: never rotated.',
  })
  replaced_by: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'After a rotation with `grace_period_seconds`: when this key stops working (it may be past); null: no grace period, or it was revoked since.',
  })
  grace_until: string | null;
}

/** The create response: the record with the full key, shown this once. */
export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({
    type: 'string',
    maxLength: EXAMPLE_KEY.length,
    pattern: '^svc_[0-9A-Za-z]{38}$',
    required: false,
    description:
      'The full key: `svc_`, 32 random base62 characters and a 6-character CRC32 checksum. Never shown again: absent from an `Idempotency-Key` replay, which carries `key_withheld` instead.',
    example: EXAMPLE_KEY,
  })
  key?: string;

  @ApiProperty({
    type: 'string',
    required: false,
    maxLength: 200,
    description: `Only in an \`Idempotency-Key\` replay, instead of \`key\`: "${KEY_WITHHELD_NOTICE}"`,
  })
  key_withheld?: string;
}

/** The rotate response: the new key, once, and the id of the key it replaced. */
export class RotatedApiKeyResponse extends CreatedApiKeyResponse {
  @ApiProperty({ type: 'string', format: 'uuid', description: 'The id of the replaced key.' })
  rotated_from: string;
}
