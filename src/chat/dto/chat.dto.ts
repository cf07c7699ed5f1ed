import { ApiPropertyOptional } from '@nestjs/swagger';
import { StringField } from '../../common/validation.js';
import { MAX_QUERY_CHARACTERS } from '../../query/dto/query.dto.js';

export class CreateSessionDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 200, description: 'Default: "New chat".' })
  @StringField({ optional: true, max: 200 })
  title?: string;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: 50,
    description: "A public domain's slug. Absent or null: the organization's private documents.",
    example: 'medicine',
  })
  @StringField({ optional: true, max: 50 })
  domain?: string | null;
}

export class UpdateSessionDto {
  @StringField({ max: 200 })
  title: string;
}

export class PostMessageDto {
  @StringField({ max: MAX_QUERY_CHARACTERS })
  content: string;
}
