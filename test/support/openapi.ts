/**
 * Just enough of OpenAPI 3.0 and its JSON Schema dialect to check a document and the bodies it
 * describes: `$ref`, `allOf`/`anyOf`/`oneOf`, `type` (with `integer`), `nullable`, `enum`,
 * `properties`/`required`, `additionalProperties`, `items`, the limits (`maxLength`, `maxItems`...), and the formats the service uses.
 */

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  nullable?: boolean;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  pattern?: string;
  example?: unknown;
  description?: string;
}

export interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown; $ref?: string }>;
}
export interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}
export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response>;
}
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  tags?: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, Response>;
    securitySchemes: Record<string, Record<string, string>>;
  };
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

export function operationsOf(document: OpenApiDocument): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

/** The value a local `$ref` (`#/a/b`) points at, or undefined. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Every `$ref` anywhere in the document, with where it was found. */
export function allRefs(node: unknown, at = '#'): { at: string; ref: string }[] {
  if (node === null || typeof node !== 'object') return [];
  const found: { at: string; ref: string }[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') found.push({ at, ref: value });
    else found.push(...allRefs(value, `${at}/${key}`));
  }
  return found;
}

export function deref<T extends { $ref?: string }>(document: OpenApiDocument, node: T): T {
  let current = node;
  for (let hops = 0; current?.$ref && hops < 10; hops++) current = resolvePointer(document, current.$ref) as T;
  return current;
}

const FORMATS: Record<string, (value: string) => boolean> = {
  'date-time': (value) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
    !Number.isNaN(Date.parse(value)),
  date: (value) => /^\d{4}-\d{2}-\d{2}$/.test(value),
  uuid: (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value),
  email: (value) => /^[^@\s]+@[^@\s]+$/.test(value),
  uri: (value) => URL.canParse(value),
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Why `value` does not match `schema` (empty when it does). With `strict`, an object schema that lists
 * its properties and says nothing of others allows no others: the document must name every field
 * the service returns.
 */
export function mismatches(
  document: OpenApiDocument,
  schema: Schema | undefined,
  value: unknown,
  at = '$',
  strict = true,
): string[] {
  if (!schema) return [`${at}: no schema`];
  if (schema.$ref) {
    const target = resolvePointer(document, schema.$ref) as Schema | undefined;
    return target ? mismatches(document, target, value, at, strict) : [`${at}: unresolved ${schema.$ref}`];
  }
  if (value === null && (schema.nullable || schema.type === 'null')) return [];
  const problems: string[] = [];
  if (schema.allOf) for (const part of schema.allOf) problems.push(...mismatches(document, part, value, at, false));
  if (schema.anyOf && !schema.anyOf.some((part) => mismatches(document, part, value, at, strict).length === 0)) {
    problems.push(
      `${at}: matches none of anyOf (${schema.anyOf.map((part) => mismatches(document, part, value, at, strict).join('; ')).join(' | ')})`,
    );
  }
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((part) => mismatches(document, part, value, at, strict).length === 0).length;
    if (matching !== 1) problems.push(`${at}: matches ${matching} of oneOf`);
  }
  if (schema.enum && !schema.enum.some((option) => option === value))
    problems.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  if (!schema.type) return problems;
  const actual = typeOf(value);
  const typeMatches = actual === schema.type || (schema.type === 'number' && actual === 'integer');
  if (!typeMatches)
    return [...problems, `${at}: expected ${schema.type}${schema.nullable ? ' or null' : ''}, got ${actual}`];
  if (typeof value === 'string') {
    if (schema.format && FORMATS[schema.format] && !FORMATS[schema.format](value))
      problems.push(`${at}: ${JSON.stringify(value)} is not ${schema.format}`);
    if (schema.pattern && !new RegExp(schema.pattern).test(value))
      problems.push(`${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.maxItems !== undefined && value.length > schema.maxItems)
    problems.push(`${at}: more than ${schema.maxItems} items`);
  if (
    actual === 'object' &&
    schema.maxProperties !== undefined &&
    Object.keys(value as object).length > schema.maxProperties
  ) {
    problems.push(`${at}: more than ${schema.maxProperties} properties`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, index) =>
      problems.push(...mismatches(document, schema.items, item, `${at}[${index}]`, strict)),
    );
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) problems.push(`${at}: missing ${name}`);
    for (const [name, item] of Object.entries(object)) {
      const declared = schema.properties?.[name];
      if (declared) problems.push(...mismatches(document, declared, item, `${at}.${name}`, strict));
      else if (typeof schema.additionalProperties === 'object')
        problems.push(...mismatches(document, schema.additionalProperties, item, `${at}.${name}`, strict));
      else if (
        schema.additionalProperties === false ||
        (strict && schema.properties && schema.additionalProperties === undefined)
      ) {
        problems.push(`${at}: undocumented property ${name}`);
      }
    }
  }
  return problems;
}
