import { StringField } from '../../common/validation.js';
import { MAX_QUERY_CHARACTERS } from '../../query/dto/query.dto.js';

export class CreateSessionDto {
  @StringField({ optional: true, max: 200 })
  title?: string;

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
