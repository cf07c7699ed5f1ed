import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FutureTimestampOrNull, IntegerField, StringField } from '../../common/validation.js';

export class CreateApiKeyDto {
  @StringField({ max: 100 })
  name: string;
}

export class UpdateApiKeyDto {
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'Required, may be null. A future ISO 8601 time with `Z` or an offset sets the expiry; null removes it.',
    example: '2026-12-31T23:59:59Z',
  })
  @FutureTimestampOrNull()
  expires_at: string | null;
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
