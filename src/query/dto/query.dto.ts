import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CollectionIdsField } from '../../collections/dto/collection-ids.field.js';
import { BooleanField, IntegerField, StringField } from '../../common/validation.js';
import type { MetadataFilter } from '../../retrieval/metadata-filter.js';
import { MetadataFilterField } from './metadata-filter.field.js';

export const MAX_QUERY_CHARACTERS = 4000;
export const MAX_TOP_K = 100;

/** The optional `domain` of a question: a public domain's slug, or absent/null for the private base. */
export function DomainSlugField() {
  return (target: object, property: string) => {
    StringField({ optional: true, max: 50 })(target, property);
    ApiPropertyOptional({
      type: 'string',
      nullable: true,
      maxLength: 50,
      description: "A public domain's slug. Absent or null: the organization's private documents.",
      example: 'medicine',
    })(target, property);
  };
}

export class QueryDto {
  @ApiProperty({
    type: 'string',
    maxLength: MAX_QUERY_CHARACTERS,
    description: 'The question; not blank.',
    example: 'How do I rotate an API key?',
  })
  @StringField({ max: MAX_QUERY_CHARACTERS })
  query: string;

  @DomainSlugField()
  domain?: string | null;

  @CollectionIdsField()
  collection_ids?: string[] | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TOP_K,
    default: 5,
    description: 'How many sources come back, best first.',
  })
  @IntegerField({ min: 1, max: MAX_TOP_K })
  top_k?: number;

  @MetadataFilterField()
  filter?: MetadataFilter | null;

  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description: 'Answer as Server-Sent Events (`text/event-stream`) instead of one JSON body.',
  })
  @BooleanField()
  stream?: boolean;
}
