import { ApiPropertyOptional } from '@nestjs/swagger';
import { CollectionIdsField } from '../../collections/dto/collection-ids.field.js';
import { StringField } from '../../common/validation.js';
import { DomainSlugField, MAX_QUERY_CHARACTERS } from '../../query/dto/query.dto.js';
import { MetadataFilterField } from '../../query/dto/metadata-filter.field.js';
import type { MetadataFilter } from '../../retrieval/metadata-filter.js';

export class CreateSessionDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 200, description: 'Default: "New chat".' })
  @StringField({ optional: true, max: 200 })
  title?: string | null;

  @DomainSlugField()
  domain?: string | null;
}

export class UpdateSessionDto {
  @StringField({ max: 200 })
  title: string;
}

export class PostMessageDto {
  @StringField({ max: MAX_QUERY_CHARACTERS })
  content: string;

  @MetadataFilterField()
  filter?: MetadataFilter | null;

  @CollectionIdsField(
    "1 to 20 collections this message asks, ranked as one corpus. Default: `default`, or for an API key limited to collections, all of its own. Not in a session with a `domain` (400). Unknown or out of the key's reach: 404.",
  )
  collection_ids?: string[] | null;
}
