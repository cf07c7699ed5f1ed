import { ApiProperty } from '@nestjs/swagger';
import { SLUG_MAX, SLUG_PATTERN } from '../../domains/dto/slug.field.js';
import { MAX_ALLOWED_DOMAINS } from './organization.dto.js';

/** `GET`/`PATCH /v1/organizations/current/`. */
export class OrganizationResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: 100, example: 'Acme Research' })
  name: string;

  @ApiProperty({
    type: 'string',
    isArray: true,
    nullable: true,
    maxLength: SLUG_MAX,
    pattern: SLUG_PATTERN.source,
    maxItems: MAX_ALLOWED_DOMAINS,
    description: 'Null: every active public domain may be queried. A list: only those domains (an empty list: none).',
    example: ['medicine', 'law'],
  })
  allowed_domains: string[] | null;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}
