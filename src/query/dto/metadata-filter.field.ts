import { AsParsed, type FieldSchema, fieldRule } from '../../common/validation.js';
import { ValidationFailedError } from '../../common/errors.js';
import {
  FILTER_FIELDS_MAX,
  FILTER_LIST_MAX,
  FILTER_VALUE_MAX,
  metadataFilterProblem,
} from '../../retrieval/metadata-filter.js';

const SCALAR = { oneOf: [{ type: 'string', maxLength: FILTER_VALUE_MAX }, { type: 'number' }] };
const LIST = { type: 'array', maxItems: FILTER_LIST_MAX, items: SCALAR };

/** What `metadataFilterProblem` accepts, as the OpenAPI document states it. */
const FILTER_SCHEMA = {
  type: 'object',
  maxProperties: FILTER_FIELDS_MAX,
  additionalProperties: {
    oneOf: [
      ...SCALAR.oneOf,
      {
        type: 'object',
        minProperties: 1,
        additionalProperties: false,
        properties: {
          $eq: SCALAR,
          $ne: SCALAR,
          $in: LIST,
          $nin: LIST,
          $gt: SCALAR,
          $gte: SCALAR,
          $lt: SCALAR,
          $lte: SCALAR,
          $exists: { type: 'boolean' },
        },
      },
    ],
  },
};

/** Optional `filter`: only documents whose metadata match it contribute passages. */
export function MetadataFilterField() {
  const rule = fieldRule('metadataFilter', metadataFilterProblem, {
    ...FILTER_SCHEMA,
    nullable: true,
    required: false,
    description: `Only documents whose metadata match contribute passages. Fields are ANDed (at most ${FILTER_FIELDS_MAX}); each maps a metadata key to a value (equality) or to operators: \`$eq\`, \`$ne\`, \`$in\`, \`$nin\` (lists of up to ${FILTER_LIST_MAX} values), \`$gt\`, \`$gte\`, \`$lt\`, \`$lte\` (numbers or strings, one type per field), \`$exists\` (boolean). A document without the field matches only \`$ne\`, \`$nin\` and \`$exists: false\`.`,
    example: { source: 'handbook', year: { $gte: 2024 }, team: { $in: ['billing', 'security'] } },
  } as FieldSchema);
  // Field names such as `__proto__` and `constructor` are metadata names like any other.
  return (target: object, property: string) => {
    AsParsed()(target, property);
    rule(target, property);
  };
}

/** The 400 of a malformed filter, as an OpenAPI example. */
export const FILTER_MALFORMED = ValidationFailedError.field(
  'filter',
  metadataFilterProblem({ year: { $foo: 2024 } }) ?? '',
);
