import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../openapi/page.response.js';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';

export class WebhookResponse {
  @ApiProperty({ format: 'uuid', example: '7c0b6f8e-2f4e-4d1a-9a53-0f3b7f1c2d4e' })
  id: string;

  @ApiProperty({ example: 'https://partner.example.com/hooks/kqs' })
  url: string;

  @ApiProperty({ example: 'Production receiver' })
  description: string;

  @ApiProperty({ type: 'string', isArray: true, enum: [...WEBHOOK_EVENT_TYPES], example: ['document.indexed'] })
  events: string[];

  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why the service disabled it (410 Gone, five days of failures), or that a user did.',
    example: null,
  })
  disabled_reason: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  updated_at: string;
}

export class CreatedWebhookResponse extends WebhookResponse {
  @ApiProperty({
    description: 'The signing secret (`whsec_` + base64 of 32 bytes): shown this once.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/9Ko3ZJHXR4=',
  })
  secret: string;
}

export class WebhookSecretResponse {
  @ApiProperty({
    description: 'The new secret, shown this once. The previous one keeps signing alongside for 24 hours.',
    example: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  })
  secret: string;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid', description: 'The event; `webhook-id` is `msg_` and this id, on every retry.' })
  event_id: string;

  @ApiProperty({ example: 'document.indexed' })
  type: string;

  @ApiProperty({ enum: ['pending', 'sending', 'delivered', 'failed'], example: 'delivered' })
  status: string;

  @ApiProperty({ example: 1 })
  attempts: number;

  @ApiProperty({ type: 'integer', nullable: true, example: 200 })
  response_status: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The receiver's answer, its first 1 KB.", example: 'ok' })
  response_body: string | null;

  @ApiProperty({ type: 'string', nullable: true, example: null })
  last_error: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  next_attempt_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T21:00:00.000000Z' })
  created_at: string;
}

export const WebhookDeliveryPage = PageOf(WebhookDeliveryResponse, 'WebhookDeliveryPage');
