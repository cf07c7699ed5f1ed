import { StringField } from '../../common/validation.js';
import { MetadataField } from './metadata.field.js';

export const TITLE_MAX = 300;

/** `POST .../documents/` as JSON. */
export class CreateDocumentDto {
  @StringField({ max: TITLE_MAX })
  title: string;

  @StringField()
  content: string;

  @MetadataField()
  metadata?: Record<string, string | number> | null;
}

/** The text fields that may accompany a multipart upload. */
export class UploadFieldsDto {
  @StringField({ max: TITLE_MAX, optional: true })
  title?: string;

  /** A JSON object, sent as a string field. */
  @StringField({ optional: true, allowBlank: true })
  metadata?: string;
}
