import { ApiProperty } from '@nestjs/swagger';
import { API_KEY_PREFIX, checksumOf, keyPrefixOf } from '../key-format.js';

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
}

/** The create response: the record with the full key, shown this once. */
export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({
    type: 'string',
    maxLength: EXAMPLE_KEY.length,
    pattern: '^svc_[0-9A-Za-z]{38}$',
    description:
      'The full key: `svc_`, 32 random base62 characters and a 6-character CRC32 checksum. Never shown again.',
    example: EXAMPLE_KEY,
  })
  key: string;
}

/** The rotate response: the new key, once, and the id of the key it replaced. */
export class RotatedApiKeyResponse extends CreatedApiKeyResponse {
  @ApiProperty({ type: 'string', format: 'uuid', description: 'The id of the replaced key.' })
  rotated_from: string;
}
