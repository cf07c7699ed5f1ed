import { ApiProperty } from '@nestjs/swagger';
import { SLUG_SCHEMA } from './slug.field.js';

/** A region as `presentRegion` returns it. */
export class RegionResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: 100, example: 'Europe' })
  name: string;

  @ApiProperty({ ...SLUG_SCHEMA, example: 'europe' })
  slug: string;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}

/** A public domain (knowledge base) as `presentDomain` returns it. */
export class DomainResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', maxLength: 100, example: 'Medicine' })
  name: string;

  @ApiProperty({ ...SLUG_SCHEMA, description: 'What `domain` names in a query.', example: 'medicine' })
  slug: string;

  @ApiProperty({ type: 'string', maxLength: 2000, description: 'Empty when none was given.' })
  description: string;

  @ApiProperty({ ...SLUG_SCHEMA, nullable: true, description: "The region's slug, or null.", example: 'europe' })
  region: string | null;

  @ApiProperty({
    type: 'boolean',
    description: 'False hides the domain: querying it is a 404 (administrators still see it).',
  })
  is_active: boolean;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}
