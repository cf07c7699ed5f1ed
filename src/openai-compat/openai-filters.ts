import {
  type FieldOperators,
  type MetadataFilter,
  metadataFilterProblem,
  parseMetadataFilter,
} from '../retrieval/metadata-filter.js';

/**
 * OpenAI's vector-store search `filters` (a comparison `{type, key, value}` or a compound `{type: "and",
 * filters}`) as this service's metadata filter, or what is wrong with them (a 400 naming `filters`).
 * Comparisons: eq, ne, gt, gte, lt, lte, in, nin. A compound `and` may nest; `or` is not supported (the
 * metadata filter ANDs its fields).
 */
export function metadataFilterOf(filters: unknown): { filter?: MetadataFilter; problem?: string } {
  if (filters === undefined || filters === null) return {};
  // No prototype: a key such as "__proto__" or "constructor" is an attribute name like any other.
  const fields: Record<string, FieldOperators> = Object.create(null) as Record<string, FieldOperators>;
  const problem = collect(filters, fields, 0);
  if (problem) return { problem };
  const invalid = metadataFilterProblem(fields);
  return invalid ? { problem: invalid } : { filter: parseMetadataFilter(fields) };
}

const COMPARISONS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin'] as const;
type Comparison = (typeof COMPARISONS)[number];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function collect(node: unknown, into: Record<string, FieldOperators>, depth: number): string | null {
  if (!isObject(node)) return 'Expected a comparison filter {type, key, value} or a compound filter {type, filters}.';
  if (depth > 5) return 'Compound filters may nest at most 5 deep.';
  if (node.type === 'and') {
    if (!Array.isArray(node.filters) || node.filters.length === 0)
      return 'A compound filter needs a non-empty list "filters".';
    for (const child of node.filters as unknown[]) {
      const problem = collect(child, into, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  if (node.type === 'or') return 'Compound filters of type "or" are not supported; use "and".';
  if (!COMPARISONS.includes(node.type as Comparison))
    return `Unknown filter type ${JSON.stringify(node.type)}; use eq, ne, gt, gte, lt, lte, in, nin or and.`;
  if (typeof node.key !== 'string' || node.key === '') return 'A comparison filter needs a "key" (a string).';
  const key = node.key;
  const type = node.type as Comparison;
  const value = node.value;
  const scalar = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
  const list = type === 'in' || type === 'nin';
  if (list ? !Array.isArray(value) || !value.every(scalar) : !scalar(value))
    return list
      ? `"${key}": "${type}" needs a list of strings or numbers.`
      : `"${key}": "${type}" needs a string or a number (attributes are strings and numbers here).`;
  const operator = `$${type}` as keyof FieldOperators;
  const field = Object.hasOwn(into, key) ? into[key] : (into[key] = {});
  if (operator in field) return `"${key}" is compared with "${type}" twice.`;
  (field as Record<string, unknown>)[operator] = value;
  return null;
}
