import { StringField } from '../../common/validation.js';
import { MetadataField } from './metadata.field.js';
import { NoNullCharacters } from './no-null-characters.js';

export const TITLE_MAX = 300;

/** `POST .../documents/` as JSON. */
export class CreateDocumentDto {
  @StringField({ max: TITLE_MAX })
  @NoNullCharacters()
  title: string;

  @StringField()
  @NoNullCharacters()
  content: string;

  @MetadataField()
  metadata?: Record<string, string | number> | null;
}

/** The text fields that may accompany a multipart upload. */
export class UploadFieldsDto {
  @StringField({ max: TITLE_MAX, optional: true })
  @NoNullCharacters()
  title?: string;

  /** A JSON object, sent as a string field. */
  @StringField({ optional: true, allowBlank: true })
  metadata?: string;
}
