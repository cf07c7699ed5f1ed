import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, ApiQuery } from '@nestjs/swagger';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../common/pagination.js';
import { integerSchema } from '../common/validation.js';
import { ApiErrors } from './api-errors.js';
import { COUNT } from './limits.js';

/**
 * The schema of a paginated list (`toPage`): `{count, next, previous, results}`. One named class per
 * item type, e.g. `PageOf(DocumentResponse, 'DocumentPage')`.
 */
export function PageOf<T>(item: Type<T>, name: string) {
  class Page {
    @ApiProperty({ ...COUNT, description: 'All the items, across pages.', example: 42 })
    count: number;

    @ApiProperty({
      type: 'string',
      format: 'uri-reference',
      nullable: true,
      description: "The next page (path and query, relative to the service's origin), or null on the last.",
      example: '/v1/documents/?limit=20&offset=20',
    })
    next: string | null;

    @ApiProperty({
      type: 'string',
      format: 'uri-reference',
      nullable: true,
      description: "The previous page (path and query, relative to the service's origin), or null on the first.",
      example: null,
    })
    previous: string | null;

    @ApiProperty({ type: item, isArray: true, maxItems: MAX_LIMIT })
    results: T[];
  }
  Object.defineProperty(Page, 'name', { value: name });
  return Page;
}

/** `?limit=&offset=` as `@Pagination()` reads them; a bad value is a 400 naming it. */
export function ApiPagination() {
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { ...integerSchema(1, MAX_LIMIT), default: DEFAULT_LIMIT },
      description: 'Page size.',
    }),
    ApiQuery({
      name: 'offset',
      required: false,
      schema: { ...integerSchema(0, Number.MAX_SAFE_INTEGER), default: 0 },
      description: 'Items to skip.',
    }),
    ApiErrors({ 400: 'A `limit` or `offset` that is not a whole number in range.' }),
  );
}
