import { getSchemaPath } from '@nestjs/swagger';
import { AsParsed, fieldRule, REQUIRED } from '../../common/validation.js';
import { CollectionIdField } from '../../collections/dto/collection-ids.field.js';
import { CreateDocumentDto } from './document.dto.js';

/** Documents per `POST /v1/documents/batch/`. */
export const BATCH_MAX = 100;

/**
 * `POST /v1/documents/batch/`. Only the list is checked here; each document is checked as a
 * `CreateDocumentDto` by the reader, which names it (`documents[3].content`).
 */
export class CreateDocumentBatchDto {
  @fieldRule(
    'documentList',
    (value) => {
      if (value === undefined || value === null) return REQUIRED;
      if (!Array.isArray(value)) return 'Expected a list of documents.';
      if (value.length === 0) return 'This list may not be empty.';
      if (value.length > BATCH_MAX) return `Ensure this field has no more than ${BATCH_MAX} elements.`;
      return null;
    },
    {
      type: 'array',
      items: { $ref: getSchemaPath(CreateDocumentDto) },
      minItems: 1,
      maxItems: BATCH_MAX,
      required: true,
      description: `1 to ${BATCH_MAX} documents, stored all or none; the whole body within MAX_BODY_BYTES (1 MB by default).`,
      example: [
        { title: 'Rotating API keys', content: 'Rotate a key from the dashboard…', metadata: { source: 'handbook' } },
        { title: 'Billing periods', content: 'Credits reset on the first day of each period…' },
      ],
    },
  )
  // Kept as parsed: the reader checks each document as a CreateDocumentDto, whose metadata keeps its keys.
  @AsParsed()
  documents: unknown[];

  /** For all the documents of the batch. */
  @CollectionIdField()
  collection_id?: string | null;
}
