import { ApiProperty } from '@nestjs/swagger';
import { SLUG_PATTERN } from './slug.field.js';

/** A region as `presentRegion` returns it. */
export class RegionResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', example: 'Europe' })
  name: string;

  @ApiProperty({ type: 'string', pattern: SLUG_PATTERN.source, example: 'europe' })
  slug: string;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}

/** A public domain (knowledge base) as `presentDomain` returns it. */
export class DomainResponse {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', example: 'Medicine' })
  name: string;

  @ApiProperty({ type: 'string', pattern: SLUG_PATTERN.source, description: 'What `domain` names in a query.', example: 'medicine' })
  slug: string;

  @ApiProperty({ type: 'string', description: 'Empty when none was given.' })
  description: string;

  @ApiProperty({ type: 'string', nullable: true, description: "The region's slug, or null.", example: 'europe' })
  region: string | null;

  @ApiProperty({ type: 'boolean', description: 'False hides the domain: querying it is a 404 (administrators still see it).' })
  is_active: boolean;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}
