import { BooleanField, IntegerField, StringField } from '../../common/validation.js';

export const MAX_QUERY_CHARACTERS = 4000;

export class QueryDto {
  @StringField({ max: MAX_QUERY_CHARACTERS })
  query: string;

  @StringField({ optional: true, max: 50 })
  domain?: string | null;

  @IntegerField({ min: 1, max: 100 })
  top_k?: number;

  @BooleanField()
  stream?: boolean;
}
