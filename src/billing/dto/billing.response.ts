import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../openapi/page.response.js';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';
import { CREDITS } from '../../openapi/limits.js';

/** The current period's quota (calendar months in UTC). */
export class QuotaResponse {
  @ApiProperty({
    ...CREDITS,
    description: "The period's credits (DEFAULT_MONTHLY_CREDITS for a new organization).",
    example: 1000,
  })
  credits_total: number;

  @ApiProperty({ ...CREDITS, example: 1 })
  credits_used: number;

  @ApiProperty({
    ...CREDITS,
    description: 'At most `credits_total`, never below 0. At 0, metered requests get 402.',
    example: 999,
  })
  credits_remaining: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'Start of the current month (UTC).',
    example: '2026-11-01T00:00:00Z',
  })
  period_start: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'Start of the next month (UTC): when the quota resets.',
    example: '2026-12-01T00:00:00Z',
  })
  period_end: string;
}

/** `GET /v1/billings/subscription/`, and the admin's change of monthly credits. */
export class SubscriptionResponse {
  @ApiProperty({ type: 'string', maxLength: 50, example: 'standard' })
  plan: string;

  @ApiProperty({ type: QuotaResponse })
  current_quota: QuotaResponse;
}

/** One spend, as `UsageService.list` returns it. */
export class UsageRecordResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', enum: ['query', 'chat_message', 'chat_completion', 'search'] })
  operation: string;

  @ApiProperty({ ...CREDITS, example: 1 })
  credits: number;

  @ApiProperty({
    ...SLUG_SCHEMA,
    nullable: true,
    description: "The public domain asked, or null for the organization's private documents.",
  })
  domain: string | null;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The user who spent (directly or through one of their keys).',
  })
  user_id: string | null;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The API key that spent (the `key_id` filter), or null when a signed-in user (JWT) did.',
    example: '3f1e7c2a-9b4d-4c1e-8f2a-5d6b7c8e9f01',
  })
  key_id: string | null;

  @ApiProperty({
    type: 'string',
    maxLength: 12,
    nullable: true,
    description: 'The API key that spent, or null when a signed-in user (JWT) did.',
    example: 'svc_7GkQ2mZp',
  })
  key_prefix: string | null;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}

export const UsagePage = PageOf(UsageRecordResponse, 'UsagePage');

/** Credits per UTC day of the current period. */
export class DailyUsageResponse {
  @ApiProperty({ type: 'string', format: 'date', example: '2026-11-21' })
  date: string;

  @ApiProperty({ ...CREDITS, description: 'Credits spent that day (0 included).', example: 12 })
  credits: number;
}

/** One row of `GET /v1/billings/usage/keys/`: a credential's spending in the current period. */
export class KeyUsageResponse {
  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The API key, or null for the row of what signed-in users (JWT) spent.',
    example: '3f1e7c2a-9b4d-4c1e-8f2a-5d6b7c8e9f01',
  })
  key_id: string | null;

  @ApiProperty({
    type: 'string',
    maxLength: 12,
    nullable: true,
    description: 'Null on the JWT row.',
    example: 'svc_7GkQ2mZp',
  })
  key_prefix: string | null;

  @ApiProperty({
    type: 'string',
    maxLength: 100,
    nullable: true,
    description: 'Null on the JWT row.',
    example: 'ci server',
  })
  name: string | null;

  @ApiProperty({ ...CREDITS, description: 'Metered requests (queries, chat messages) this period.', example: 42 })
  requests: number;

  @ApiProperty({ ...CREDITS, description: 'Credits spent this period.', example: 42 })
  credits: number;
}
