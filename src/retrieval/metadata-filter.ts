import { echoed } from '../common/errors.js';

/**
 * Metadata filters: which documents may contribute passages to a search. A filter is an object whose
 * fields are ANDed; each maps a metadata key to a value (equality) or to an object of operators.
 * `parseMetadataFilter` checks what a client sent; `compileMetadataFilter` turns a checked filter into
 * a parameterised SQL predicate on `documents.metadata` (jsonb): client text only ever travels as a
 * bound parameter, never inside the SQL.
 */

export const FILTER_FIELDS_MAX = 20;
export const FILTER_LIST_MAX = 100;
/** As long as a metadata key or value may be (see documents/dto/metadata.field.ts): longer ones match nothing. */
export const FILTER_KEY_MAX = 100;
export const FILTER_VALUE_MAX = 1000;

export type FilterScalar = string | number;

export interface FieldOperators {
  $eq?: FilterScalar;
  $ne?: FilterScalar;
  $in?: FilterScalar[];
  $nin?: FilterScalar[];
  $gt?: FilterScalar;
  $gte?: FilterScalar;
  $lt?: FilterScalar;
  $lte?: FilterScalar;
  $exists?: boolean;
}

/** A checked filter of fields, ANDed (what `parseMetadataFilter` accepts: the REST routes' `filter`). */
export type FieldFilter = Record<string, FilterScalar | FieldOperators>;

/**
 * Filters combined: all of them (`and`) or any (`or`). OpenAI's compound filters are these; the REST
 * `filter` has none (its fields are ANDed). A class, so no field of a FieldFilter is ever taken for one.
 */
export class CompoundFilter {
  constructor(
    readonly type: 'and' | 'or',
    readonly filters: readonly MetadataFilter[],
  ) {}
}

/** What a search may be filtered by. */
export type MetadataFilter = FieldFilter | CompoundFilter;

/** Each field's operators, wherever it is in the filter, in order. */
function* fieldConditions(filter: MetadataFilter): Generator<[string, FieldOperators]> {
  if (filter instanceof CompoundFilter) {
    for (const part of filter.filters) yield* fieldConditions(part);
    return;
  }
  for (const [key, condition] of Object.entries(filter))
    yield [key, typeof condition === 'object' ? condition : { $eq: condition }];
}

export const FILTER_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
type Operator = (typeof FILTER_OPERATORS)[number];
const OPERATOR_LIST = FILTER_OPERATORS.join(', ');

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A thrown problem, with the field it is about (null: the filter as a whole). */
class FilterProblem extends Error {
  constructor(
    readonly at: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Null when `value` is an acceptable filter (absent counts), else what is wrong, naming the field. */
export function metadataFilterProblem(value: unknown): string | null {
  try {
    parseMetadataFilter(value);
    return null;
  } catch (error) {
    if (!(error instanceof FilterProblem)) throw error;
    return error.at === null ? error.message : `"${echoed(error.at)}": ${error.message}`;
  }
}

/** The checked filter, or undefined when none (absent, null or `{}`); throws a FilterProblem when malformed. */
export function parseMetadataFilter(value: unknown): FieldFilter | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new FilterProblem(null, 'Must be an object of metadata fields, e.g. {"year": 2024}.');
  const fields = Object.entries(value);
  if (fields.length > FILTER_FIELDS_MAX)
    throw new FilterProblem(null, `Ensure this object has no more than ${FILTER_FIELDS_MAX} fields.`);
  if (fields.length === 0) return undefined;
  for (const [key, condition] of fields) checkField(key, condition);
  return value as FieldFilter;
}

function checkField(key: string, condition: unknown): void {
  if (key.length === 0 || key.length > FILTER_KEY_MAX || key.includes('\u0000'))
    throw new FilterProblem(key, `Field names are 1 to ${FILTER_KEY_MAX} characters long.`);
  if (!isObject(condition)) {
    scalar(key, condition, 'A value must be a string or a number (or an object of operators).');
    return;
  }
  const operators = Object.entries(condition);
  if (operators.length === 0) throw new FilterProblem(key, `Give at least one operator (${OPERATOR_LIST}).`);
  const kinds = new Set<string>();
  for (const [operator, operand] of operators) {
    if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) {
      throw new FilterProblem(
        key,
        operator.startsWith('$')
          ? `Unknown operator "${echoed(operator)}"; use ${OPERATOR_LIST}.`
          : `Nested objects are not supported: "${echoed(operator)}" is not an operator (${OPERATOR_LIST}).`,
      );
    }
    for (const item of operandValues(key, operator as Operator, operand)) kinds.add(typeof item);
  }
  if (kinds.size > 1) throw new FilterProblem(key, 'Numbers cannot be compared with strings: use one type per field.');
}

/** The scalars an operator compares with (none for `$exists`), after checking the operand's shape. */
function operandValues(key: string, operator: Operator, operand: unknown): FilterScalar[] {
  switch (operator) {
    case '$exists':
      if (typeof operand !== 'boolean') throw new FilterProblem(key, '$exists must be true or false.');
      return [];
    case '$in':
    case '$nin':
      if (!Array.isArray(operand) || operand.length > FILTER_LIST_MAX)
        throw new FilterProblem(key, `${operator} must be a list of at most ${FILTER_LIST_MAX} values.`);
      return operand.map((item) => scalar(key, item, `${operator} values must be strings or numbers.`));
    default:
      return [scalar(key, operand, `${operator} must be a string or a number.`)];
  }
}

function scalar(key: string, value: unknown, message: string): FilterScalar {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') throw new FilterProblem(key, message);
  if (value.length > FILTER_VALUE_MAX || value.includes('\u0000'))
    throw new FilterProblem(key, `Strings are at most ${FILTER_VALUE_MAX} characters, without null characters.`);
  return value;
}

/**
 * A filter as SQL, in three steps a statement runs in turn for each document (see
 * SearchIndexRepository.scoreChunks): `fields` extracts each filtered field once from the metadata
 * (`AS v0, v1, …`), `typed` turns each into a value of the filter's own type for that field
 * (`AS t0, t1, …`: numeric or text, NULL when the field is missing or of the other type), and `sql` is
 * the predicate on those. Parameters are numbered from the `firstParam` given to the compiler.
 */
export interface CompiledFilter {
  fields: string;
  typed: string;
  sql: string;
  params: unknown[];
}

const COMPARISONS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/**
 * The filter over `metadata` (a jsonb expression evaluated once per document), in `fields` over
 * `metadata`, `typed` over `fieldsAlias`, and `sql` over `typedAlias`, which must hold both the
 * fields and their typed values (see CompiledFilter).
 *
 * Each field is read from the metadata once, then compared as a plain number or string: the number
 * 2020 never equals the string "2020" (a value of the other type is NULL), 1 equals 1.0, and strings
 * order as jsonb orders them (the database's collation). A list is one `= ANY` over a numeric or text
 * array, which PostgreSQL hashes once per statement (the values are constants when it plans it), so a
 * value is found in one probe whatever the list's length. A missing field is NULL: it matches only
 * `$ne` (IS DISTINCT FROM), `$nin` (no match found) and `$exists: false`.
 */
export function compileMetadataFilter(
  filter: MetadataFilter,
  metadata: string,
  fieldsAlias: string,
  typedAlias: string,
  firstParam: number,
): CompiledFilter {
  const params: unknown[] = [];
  const param = (value: unknown, cast: string) => {
    params.push(value);
    return `$${firstParam + params.length - 1}::${cast}`;
  };
  // One type per field (the parsers check it, across a compound filter's parts too), so the first
  // operand that is not `$exists` says which.
  const numericFields = new Set<string>();
  for (const [key, operators] of fieldConditions(filter))
    if (
      Object.values(operators).some((operand) =>
        Array.isArray(operand) ? typeof operand[0] === 'number' : typeof operand === 'number',
      )
    )
      numericFields.add(key);
  // Each field read once, however often the filter names it (a compound filter may, in several parts).
  const fieldIndex = new Map<string, number>();
  const fields: string[] = [];
  const typed: string[] = [];
  const indexOf = (key: string): number => {
    const known = fieldIndex.get(key);
    if (known !== undefined) return known;
    const index = fields.length;
    fieldIndex.set(key, index);
    fields.push(`${metadata} -> ${param(key, 'text')} AS v${index}`);
    const raw = `${fieldsAlias}.v${index}`;
    typed.push(
      numericFields.has(key)
        ? `CASE WHEN jsonb_typeof(${raw}) = 'number' THEN ${raw}::numeric END AS t${index}`
        : `CASE WHEN jsonb_typeof(${raw}) = 'string' THEN ${raw} #>> '{}' END AS t${index}`,
    );
    return index;
  };
  const conditionsOf = (key: string, operators: FieldOperators): string[] => {
    const index = indexOf(key);
    const cast = numericFields.has(key) ? 'numeric' : 'text';
    const value = `${typedAlias}.t${index}`;
    const conditions: string[] = [];
    for (const [operator, operand] of Object.entries(operators) as [Operator, FieldOperators[Operator]][]) {
      switch (operator) {
        case '$eq':
          conditions.push(`${value} = ${param(operand, cast)}`);
          break;
        case '$ne':
          conditions.push(`${value} IS DISTINCT FROM ${param(operand, cast)}`);
          break;
        case '$in':
          conditions.push(`${value} = ANY(${param(arrayLiteral(operand as FilterScalar[]), `${cast}[]`)})`);
          break;
        case '$nin':
          conditions.push(
            `NOT coalesce(${value} = ANY(${param(arrayLiteral(operand as FilterScalar[]), `${cast}[]`)}), false)`,
          );
          break;
        case '$exists':
          conditions.push(`${typedAlias}.v${index} IS ${operand ? 'NOT ' : ''}NULL`);
          break;
        default:
          conditions.push(`${value} ${COMPARISONS[operator]} ${param(operand, cast)}`);
      }
    }
    return conditions;
  };
  // A comparison with a missing field is NULL, which AND and OR both carry as "no match" here (no NOT
  // applies to a part), so a missing field matches in a compound filter as it does in a flat one.
  const sqlOf = (node: MetadataFilter): string => {
    if (node instanceof CompoundFilter) {
      const parts = node.filters.map(sqlOf);
      return `(${parts.join(node.type === 'or' ? ' OR ' : ' AND ')})`;
    }
    const conditions = [...fieldConditions(node)].flatMap(([key, operators]) => conditionsOf(key, operators));
    if (conditions.length === 0) return 'true';
    return conditions.join(' AND ');
  };
  const sql = sqlOf(filter);
  return { fields: fields.join(', '), typed: typed.join(', '), sql, params };
}

/**
 * A list as PostgreSQL's array literal (`{"a","b\\"c"}`, `{1,2.5}`), built once per filter: `pg` would
 * serialise a JavaScript array on every statement, checking each value's type (0.55 ms for the
 * 30 lists of 100 of the worst filter, per ranking round). Strings are quoted, `"` and `\` escaped
 * (they hold no null character: parseMetadataFilter); numbers are finite.
 */
function arrayLiteral(values: readonly FilterScalar[]): string {
  const items = values.map((item) =>
    typeof item === 'number' ? String(item) : `"${ESCAPED.test(item) ? item.replace(ESCAPED_ALL, '\\$&') : item}"`,
  );
  return `{${items.join(',')}}`;
}

const ESCAPED = /["\\]/;
const ESCAPED_ALL = /["\\]/g;
