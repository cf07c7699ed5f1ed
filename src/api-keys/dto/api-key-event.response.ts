import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../openapi/page.response.js';
import { REQUEST_ID_MAX } from '../../observability/request-id.js';
import type { KeyAction, KeyChanges } from '../api-key-event.entity.js';

const KEY_ACTIONS: KeyAction[] = ['created', 'updated', 'rotated', 'revoked'];

/** One entry of the key audit log. Never carries a key value, hash or token. */
export class ApiKeyEventResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', enum: KEY_ACTIONS, example: 'updated' })
  action: KeyAction;

  @ApiProperty({ type: 'string', format: 'uuid', description: 'The key acted on (for a rotation, the replaced key).' })
  key_id: string;

  @ApiProperty({ type: 'string', maxLength: 12, example: 'svc_7GkQ2mZp' })
  key_prefix: string;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'The user who made the change.' })
  actor_user_id: string | null;

  @ApiProperty({
    type: 'string',
    format: 'email',
    nullable: true,
    description: 'The e-mail of the user who made the change; null when there is none (or the user was deleted).',
    example: 'ops@example.com',
  })
  actor_email: string | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    maxProperties: 20,
    additionalProperties: { type: 'array', minItems: 2, maxItems: 2, items: {} },
    description:
      "For `updated`: each field the update changed, as `[before, after]`; for `rotated`: the new key's `id` and `key_prefix` as `[old, new]`; otherwise null.",
    example: { rate_limit_per_minute: [null, 600], scopes: [null, ['query']] },
  })
  changes: KeyChanges | null;

  @ApiProperty({
    type: 'string',
    maxLength: REQUEST_ID_MAX,
    nullable: true,
    description: 'The X-Request-Id of the request that made the change.',
  })
  request_id: string | null;

  @ApiProperty({
    type: 'string',
    maxLength: 64,
    nullable: true,
    description: "The client's address.",
    example: '203.0.113.7',
  })
  ip: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}

export const ApiKeyEventPage = PageOf(ApiKeyEventResponse, 'ApiKeyEventPage');
