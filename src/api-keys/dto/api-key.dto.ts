import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ApiKeyScope } from '../../common/scopes.js';
import { FutureTimestampOrNull, IntegerField, StringField } from '../../common/validation.js';
import type { KeyMetadata } from '../key-settings.js';
import { CollectionIdsField } from '../../collections/dto/collection-ids.field.js';
import { CreditLimitField, MetadataField, RateLimitField, ScopesField } from './key-settings.rules.js';

/** The partner settings, each optional (absent: unchanged on update, the default on create). */
class KeySettingsDto {
  @ScopesField()
  scopes?: ApiKeyScope[] | null;

  @RateLimitField()
  rate_limit_per_minute?: number | null;

  @CreditLimitField()
  monthly_credit_limit?: number | null;

  @MetadataField()
  metadata?: KeyMetadata;

  @CollectionIdsField(
    'The collections the key may reach, 1 to 20 (`"default"` may stand for the default collection\'s id); null (the default) means every collection. A limited key finds, reads and writes nothing of any other collection (404); a question without `collection_ids` asks all of its own, an upload without `collection_id` goes into the first. An unknown collection: 404.',
  )
  collection_ids?: string[] | null;
}

export class CreateApiKeyDto extends KeySettingsDto {
  @StringField({ max: 100 })
  name: string;
}

/** The fields an update may carry; at least one of them must be given. */
export const UPDATABLE_FIELDS = [
  'expires_at',
  'name',
  'scopes',
  'rate_limit_per_minute',
  'monthly_credit_limit',
  'metadata',
  'collection_ids',
] as const;

export class UpdateApiKeyDto extends KeySettingsDto {
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    required: false,
    description:
      'A future ISO 8601 time with `Z` or an offset sets the expiry; null removes it; absent leaves it. Required when no other field is given (an empty body is a 400 naming `expires_at`).',
    example: '2026-12-31T23:59:59Z',
  })
  @FutureTimestampOrNull({ unlessAnyOf: UPDATABLE_FIELDS })
  expires_at?: string | null;

  @StringField({ max: 100, optional: true, notNull: true })
  name?: string;
}

export class RotateApiKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 86_400,
    default: 0,
    description: 'Seconds the old key keeps working (never past its own expires_at). 0: it stops at once.',
  })
  @IntegerField({ min: 0, max: 86_400 })
  grace_period_seconds?: number;
}
