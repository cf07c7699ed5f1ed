import {
  CompoundFilter,
  FILTER_FIELDS_MAX,
  type FieldOperators,
  type MetadataFilter,
  metadataFilterProblem,
  parseMetadataFilter,
} from '../retrieval/metadata-filter.js';

/** How deep compound filters may nest (a comparison at the bottom of 5 compounds is depth 5). */
export const COMPOUND_DEPTH_MAX = 5;

/**
 * OpenAI's vector-store search `filters` (a comparison `{type, key, value}` or a compound `{type: "and" |
 * "or", filters}`) as this service's metadata filter, or what is wrong with them (a 400 naming `filters`).
 * Comparisons: eq, ne, gt, gte, lt, lte, in, nin, over strings and numbers (attributes hold no booleans
 * here, so a boolean value is refused rather than never matching). Compounds nest at most
 * COMPOUND_DEPTH_MAX deep, with at most FILTER_FIELDS_MAX comparisons in all (as the REST filter's fields),
 * and a key is compared with one type throughout.
 */
export function metadataFilterOf(filters: unknown): { filter?: MetadataFilter; problem?: string } {
  if (filters === undefined || filters === null) return {};
  const state: Walk = { comparisons: 0, kinds: new Map() };
  try {
    return { filter: walk(filters, 0, state) };
  } catch (error) {
    if (error instanceof FilterRefused) return { problem: error.message };
    throw error;
  }
}

const COMPARISONS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin'] as const;
type Comparison = (typeof COMPARISONS)[number];

class FilterRefused extends Error {}

interface Walk {
  comparisons: number;
  /** Each key's operand type so far ('string' or 'number'). */
  kinds: Map<string, string>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function walk(node: unknown, depth: number, state: Walk): MetadataFilter {
  if (!isObject(node))
    throw new FilterRefused('Expected a comparison filter {type, key, value} or a compound filter {type, filters}.');
  if (node.type === 'and' || node.type === 'or') {
    if (depth >= COMPOUND_DEPTH_MAX)
      throw new FilterRefused(`Compound filters may nest at most ${COMPOUND_DEPTH_MAX} deep.`);
    if (!Array.isArray(node.filters) || node.filters.length === 0)
      throw new FilterRefused('A compound filter needs a non-empty list "filters".');
    return new CompoundFilter(
      node.type,
      (node.filters as unknown[]).map((child) => walk(child, depth + 1, state)),
    );
  }
  if (!COMPARISONS.includes(node.type as Comparison))
    throw new FilterRefused(
      `Unknown filter type ${JSON.stringify(node.type)}; use eq, ne, gt, gte, lt, lte, in, nin, and or or.`,
    );
  if (typeof node.key !== 'string' || node.key === '')
    throw new FilterRefused('A comparison filter needs a "key" (a string).');
  const key = node.key;
  const type = node.type as Comparison;
  const value = node.value;
  const scalar = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
  const list = type === 'in' || type === 'nin';
  if (list ? !Array.isArray(value) || !value.every(scalar) : !scalar(value))
    throw new FilterRefused(
      list
        ? `"${key}": "${type}" needs a list of strings or numbers.`
        : `"${key}": "${type}" needs a string or a number (attributes are strings and numbers here).`,
    );
  if (++state.comparisons > FILTER_FIELDS_MAX)
    throw new FilterRefused(`Ensure the filters hold no more than ${FILTER_FIELDS_MAX} comparisons.`);
  const operands = (Array.isArray(value) ? value : [value]) as unknown[];
  for (const operand of operands) {
    const kind = typeof operand;
    const earlier = state.kinds.get(key);
    if (earlier !== undefined && earlier !== kind)
      throw new FilterRefused(`"${key}": Numbers cannot be compared with strings: use one type per field.`);
    state.kinds.set(key, kind);
  }
  // No prototype: a key such as "__proto__" or "constructor" is an attribute name like any other.
  const field = Object.create(null) as Record<string, FieldOperators>;
  field[key] = { [`$${type}`]: value };
  const problem = metadataFilterProblem(field);
  if (problem) throw new FilterRefused(problem);
  return parseMetadataFilter(field) ?? field;
}
