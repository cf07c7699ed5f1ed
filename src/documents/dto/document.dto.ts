import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { StringField } from '../../common/validation.js';
import { CollectionIdField } from '../../collections/dto/collection-ids.field.js';
import { MetadataField } from './metadata.field.js';
import { METADATA_OBJECT } from './metadata.field.js';

export const TITLE_MAX = 300;

/** `POST .../documents/` as JSON. */
export class CreateDocumentDto {
  @ApiProperty({ type: 'string', maxLength: TITLE_MAX, example: 'Rotating API keys' })
  @StringField({ max: TITLE_MAX })
  title: string;

  @ApiProperty({
    type: 'string',
    description: 'The text, within the JSON body size limit (MAX_BODY_BYTES, 1 MB by default).',
  })
  @StringField()
  content: string;

  @ApiPropertyOptional({
    ...METADATA_OBJECT,
    nullable: true,
    description:
      'A flat JSON object of strings and numbers, returned with the document and with every source drawn from it.',
    example: { source: 'handbook', year: 2026 },
  })
  @MetadataField()
  metadata?: Record<string, string | number> | null;
}

/** `POST /v1/documents/` as JSON: a document, and the collection it goes into. */
export class CreatePrivateDocumentDto extends CreateDocumentDto {
  @CollectionIdField()
  collection_id?: string | null;
}

/** The text fields that may accompany a multipart upload. */
export class UploadFieldsDto {
  @StringField({ max: TITLE_MAX, optional: true })
  title?: string;

  /** A JSON object, sent as a string field. */
  @StringField({ optional: true, allowBlank: true })
  metadata?: string;
}

/** The text fields of a multipart upload into the private knowledge base. */
export class PrivateUploadFieldsDto extends UploadFieldsDto {
  @CollectionIdField()
  collection_id?: string;
}
