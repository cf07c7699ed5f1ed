import { FutureTimestampOrNull, IntegerField, StringField } from '../../common/validation.js';

export class CreateApiKeyDto {
  @StringField({ max: 100 })
  name: string;
}

export class UpdateApiKeyDto {
  @FutureTimestampOrNull()
  expires_at: string | null;
}

export class RotateApiKeyDto {
  @IntegerField({ min: 0, max: 86_400 })
  grace_period_seconds?: number;
}
