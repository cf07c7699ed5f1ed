import { ApiProperty } from '@nestjs/swagger';
import { integerSchema } from '../../common/validation.js';
import { PageOf } from '../../openapi/page.response.js';
import { DESCRIPTION_MAX, NAME_MAX } from './collection.dto.js';

export class CollectionResponse {
  @ApiProperty({
    type: 'string',
    format: 'uuid',
    description: "The `default` collection's id is the organization's id.",
  })
  id: string;

  @ApiProperty({ type: 'string', maxLength: NAME_MAX, example: 'Support tickets' })
  name: string;

  @ApiProperty({ type: 'string', maxLength: DESCRIPTION_MAX, nullable: true, example: 'Tickets of 2026' })
  description: string | null;

  @ApiProperty({
    type: 'object',
    maxProperties: 16,
    additionalProperties: { oneOf: [{ type: 'string', maxLength: 500 }, { type: 'number' }] },
    description: 'Your labels; `{}` when none.',
    example: { customer_id: 'cus_8f2k' },
  })
  metadata: Record<string, string | number>;

  @ApiProperty({ ...integerSchema(0, 2 ** 31 - 1), description: 'Documents in the collection.', example: 12 })
  document_count: number;

  @ApiProperty({
    ...integerSchema(0, 2 ** 31 - 1),
    description: 'Passages of its documents, as searched.',
    example: 96,
  })
  chunk_count: number;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482913Z' })
  created_at: string;
}

export const CollectionPage = PageOf(CollectionResponse, 'CollectionPage');
