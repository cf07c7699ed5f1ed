import { ApiProperty } from '@nestjs/swagger';
import { SLUG_SCHEMA } from '../../domains/dto/slug.field.js';
import { MAX_TOP_K } from './query.dto.js';
import { SourceResponse } from './query.response.js';

/** `POST /v1/search/`. */
export class SearchResponse {
  @ApiProperty({
    type: SourceResponse,
    isArray: true,
    maxItems: MAX_TOP_K,
    description:
      "Up to `top_k` passages, best first, from distinct documents (the same objects as a query's `sources`).",
  })
  results: SourceResponse[];

  @ApiProperty({
    ...SLUG_SCHEMA,
    nullable: true,
    description: "The public domain searched, or null for the organization's private documents.",
    example: 'medicine',
  })
  domain: string | null;
}
