import { SECRET_WITHHELD_NOTICE } from '../../idempotency/withheld-in-replay.js';
import { ApiProperty } from '@nestjs/swagger';
import { integerSchema } from '../../common/validation.js';
import { PageOf } from '../../openapi/page.response.js';
import { URL_MAX } from './webhook.dto.js';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';

/** `whsec_` and the base64 of 32 bytes. */
const SECRET_LENGTH = 50;

export class WebhookResponse {
  @ApiProperty({ format: 'uuid', example: '7c0b6f8e-2f4e-4d1a-9a53-0f3b7f1c2d4e' })
  id: string;

  @ApiProperty({ maxLength: URL_MAX, example: 'https://partner.example.com/hooks/kqs' })
  url: string;

  @ApiProperty({ maxLength: 500, example: 'Production receiver' })
  description: string;

  @ApiProperty({
    type: 'string',
    isArray: true,
    enum: [...WEBHOOK_EVENT_TYPES],
    maxItems: WEBHOOK_EVENT_TYPES.length,
    example: ['document.indexed'],
  })
  events: string[];

  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 200,
    description: 'Why the service disabled it (410 Gone, five days of failures), or that a user did.',
    example: null,
  })
  disabled_reason: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  updated_at: string;
}

/** The notice an `Idempotency-Key` replay carries where the first answer had the secret. */
const SecretWithheld = () =>
  ApiProperty({
    type: 'string',
    required: false,
    maxLength: 200,
    description: `Only in an \`Idempotency-Key\` replay, instead of \`secret\`: "${SECRET_WITHHELD_NOTICE}"`,
  });

export class CreatedWebhookResponse extends WebhookResponse {
  @ApiProperty({
    maxLength: SECRET_LENGTH,
    required: false,
    description:
      'The signing secret (`whsec_` + base64 of 32 bytes): shown this once, absent from an `Idempotency-Key` replay.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/9Ko3ZJHXR4=',
  })
  secret?: string;

  @SecretWithheld()
  secret_withheld?: string;
}

export class WebhookSecretResponse {
  @ApiProperty({
    maxLength: SECRET_LENGTH,
    required: false,
    description:
      'The new secret, shown this once (absent from an `Idempotency-Key` replay). The previous one keeps signing alongside for 24 hours.',
    example: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDXrBXBZmkKQ0=',
  })
  secret?: string;

  @SecretWithheld()
  secret_withheld?: string;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid', description: 'The event; `webhook-id` is `msg_` and this id, on every retry.' })
  event_id: string;

  @ApiProperty({ enum: ['ping', ...WEBHOOK_EVENT_TYPES], example: 'document.indexed' })
  type: string;

  @ApiProperty({ enum: ['pending', 'sending', 'delivered', 'failed'], example: 'delivered' })
  status: string;

  @ApiProperty({ ...integerSchema(0, 1000), example: 1 })
  attempts: number;

  @ApiProperty({ ...integerSchema(100, 999), nullable: true, example: 200 })
  response_status: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 1024,
    description: "The receiver's answer, its first 1 KB.",
    example: 'ok',
  })
  response_body: string | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 300, example: null })
  last_error: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  next_attempt_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  created_at: string;
}

export const WebhookDeliveryPage = PageOf(WebhookDeliveryResponse, 'WebhookDeliveryPage');

/** The answer to a test ping or a retry: the delivery queued. */
export class QueuedDeliveryResponse {
  @ApiProperty({ format: 'uuid', description: 'The delivery, as listed in the endpoint’s deliveries.' })
  delivery_id: string;
}
