import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BooleanField, fieldRule, REQUIRED, StringField } from '../../common/validation.js';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';

export const URL_MAX = 2048;

function EventsField(optional: boolean) {
  return fieldRule(
    'webhookEvents',
    (value) => {
      if (value === undefined || value === null) return optional && value === undefined ? null : REQUIRED;
      if (!Array.isArray(value)) return 'Expected a list of event types.';
      if (value.length === 0) return 'Give at least one event type.';
      const unknown: unknown = (value as unknown[]).find(
        (type) => !(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(type),
      );
      if (unknown !== undefined)
        return `${JSON.stringify(unknown).slice(0, 60)} is not an event type; event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`;
      return new Set(value).size === value.length ? null : 'Each event type may be given once.';
    },
    {
      type: 'array',
      items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
      required: !optional,
    },
  );
}

export class CreateWebhookDto {
  @ApiProperty({
    description: 'Where events are POSTed: `https` only, never to a loopback, private, link-local or metadata address.',
    example: 'https://partner.example.com/hooks/kqs',
  })
  @StringField({ max: URL_MAX })
  url: string;

  @ApiProperty({ description: 'The event types to send here.', example: ['document.indexed', 'usage.threshold'] })
  @EventsField(false)
  events: string[];

  @ApiPropertyOptional({ example: 'Production receiver' })
  @StringField({ optional: true, notNull: true, allowBlank: true, max: 500 })
  description?: string;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ example: 'https://partner.example.com/hooks/kqs-v2' })
  @StringField({ optional: true, notNull: true, max: URL_MAX })
  url?: string;

  @ApiPropertyOptional({ example: ['api_key.expiring'] })
  @EventsField(true)
  events?: string[];

  @ApiPropertyOptional({ example: 'Staging receiver' })
  @StringField({ optional: true, notNull: true, allowBlank: true, max: 500 })
  description?: string;

  @ApiPropertyOptional({
    description: 'False stops deliveries (pending ones fail); true re-enables an endpoint the service disabled.',
    example: true,
  })
  @BooleanField()
  enabled?: boolean;
}
