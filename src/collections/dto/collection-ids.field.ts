import { ApiPropertyOptional } from '@nestjs/swagger';
import { fieldRule, StringField } from '../../common/validation.js';
import { COLLECTION_IDS_MAX } from '../collections.service.js';

/** What one id may be: a UUID, or `default` (longer strings are unknown collections: a 404 names them). */
export const COLLECTION_ID_MAX = 100;

/** Null when `value` is an acceptable list of collection ids (absent or null: the default), else what is wrong. */
export function collectionIdsProblem(value: unknown, max = COLLECTION_IDS_MAX): string | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return 'Expected a list of collection ids.';
  if (value.length === 0) return 'This list may not be empty.';
  if (value.length > max) return `Ensure this field has no more than ${max} elements.`;
  for (const id of value as unknown[])
    if (typeof id !== 'string' || id.length === 0 || id.length > COLLECTION_ID_MAX)
      return 'Expected a list of collection ids.';
  return null;
}

/** `collection_ids` of a question: 1 to 20 collections asked as one corpus. */
export function CollectionIdsField(description?: string) {
  return fieldRule('collectionIds', (value) => collectionIdsProblem(value), {
    type: 'array',
    items: { type: 'string', maxLength: COLLECTION_ID_MAX },
    minItems: 1,
    maxItems: COLLECTION_IDS_MAX,
    nullable: true,
    required: false,
    description:
      description ??
      `1 to ${COLLECTION_IDS_MAX} collections to ask, ranked as one corpus (the same results and scores as if their documents were one collection). Default: \`default\` (\`"default"\` may stand for its id), or for an API key limited to collections, all of its own. Not with \`domain\` (400). An unknown collection, or one the key may not reach: 404.`,
    example: ['3f6c1d2e-8a4b-4c6d-9e0f-1a2b3c4d5e6f'],
  });
}

/** `collection_id` of an upload: the collection the documents go into. */
export function CollectionIdField() {
  return (target: object, property: string) => {
    StringField({ optional: true, max: COLLECTION_ID_MAX })(target, property);
    ApiPropertyOptional({
      type: 'string',
      maxLength: COLLECTION_ID_MAX,
      nullable: true,
      description:
        'The collection to store into. Default: `default` (`"default"` may stand for its id), or for an API key limited to collections, the first of its own. Unknown or out of the key\'s reach: 404.',
      example: '3f6c1d2e-8a4b-4c6d-9e0f-1a2b3c4d5e6f',
    })(target, property);
  };
}
