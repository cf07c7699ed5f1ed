import { ApiPropertyOptional } from '@nestjs/swagger';
import { BooleanField, StringField } from '../../common/validation.js';
import { SlugField } from './slug.field.js';

export class CreateRegionDto {
  @StringField({ max: 100 })
  name: string;

  @SlugField()
  slug: string;
}

export class UpdateRegionDto {
  @StringField({ max: 100, optional: true })
  name?: string | null;

  @SlugField({ optional: true })
  slug?: string;
}

export class CreateDomainDto {
  @StringField({ max: 100 })
  name: string;

  @SlugField()
  slug: string;

  @StringField({ max: 2000, optional: true, allowBlank: true })
  description?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: "A region's slug, or null for none.",
    example: 'europe',
  })
  @SlugField({ optional: true, nullable: true })
  region?: string | null;
}

export class UpdateDomainDto {
  @StringField({ max: 100, optional: true })
  name?: string | null;

  @SlugField({ optional: true })
  slug?: string;

  @StringField({ max: 2000, optional: true, allowBlank: true })
  description?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: "A region's slug, or null for none.",
    example: 'europe',
  })
  @SlugField({ optional: true, nullable: true })
  region?: string | null;

  @ApiPropertyOptional({ type: 'boolean', description: 'False hides the domain from everyone but administrators.' })
  @BooleanField()
  is_active?: boolean | null;
}
