import {
  Injectable,
  type ArgumentMetadata,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { getMetadataStorage, registerDecorator, type ValidationArguments } from 'class-validator';
import { type FieldErrors, NotFoundError, ValidationFailedError } from './errors.js';
import { parseZonedTimestamp } from './timestamps.js';

export const REQUIRED = 'This field is required.';
/** An optional string given, but blank. */
export const BLANK = 'This field may not be blank.';

/** A check returning null when the value is fine, or the one message that explains what is wrong. */
export type Check = (value: unknown, args: ValidationArguments) => string | null;

/**
 * What a rule accepts, as the OpenAPI document states it (`required` too, when the rule decides it:
 * a property is required when an absent value fails the check).
 */
export type FieldSchema = ApiPropertyOptions;

/**
 * The longest string a JSON body can carry: MAX_BODY_BYTES' default, since every character takes at
 * least a byte. The documented cap of a text field the validators do not limit themselves.
 */
export const BODY_TEXT_MAX = 1_048_576;

/** An integer schema with its range and the smallest OpenAPI format that holds it. */
export function integerSchema(min: number, max: number) {
  const int32 = min >= -(2 ** 31) && max <= 2 ** 31 - 1;
  return { type: 'integer' as const, format: int32 ? 'int32' : 'int64', minimum: min, maximum: max };
}

/**
 * A property decorator from a check: the field's 400 carries exactly the check's message. `schema`
 * says what the check accepts, so the OpenAPI document states the same limits the check enforces; an
 * `@ApiProperty` written above the rule adds to it (a description, an example) and wins.
 */
export function fieldRule(name: string, check: Check, schema?: FieldSchema) {
  return (target: object, propertyName: string) => {
    if (schema) ApiProperty(schema)(target, propertyName);
    let message = '';
    registerDecorator({
      name,
      target: target.constructor,
      propertyName,
      options: { message: () => message },
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          message = check(value, args) ?? '';
          return message === '';
        },
      },
    });
  };
}

/** The name of the (always passing) class-validator rule that marks an AsParsed field. */
const AS_PARSED_RULE = 'asParsed';

/**
 * Keeps an object field exactly as the JSON parser made it, where its keys are the client's data
 * (metadata, a metadata filter): `__proto__`, `constructor` and `prototype` are names like any other
 * there. Nest's ValidationPipe deletes those keys everywhere in a body, and class-transformer's copy
 * sets a prototype for `__proto__` and fails on `constructor`, so such a filter field vanished and the
 * filter matched everything. BodyValidationPipe hands such a value through both boxed in a function
 * (which neither looks into) and this unboxes it: the object JSON.parse made, whose keys are own data
 * properties, never merged into anything. The mark is a class-validator rule so that mapped types
 * (`OmitType(QueryDto, …)`) inherit it with the field's other rules.
 */
export const AsParsed = () => (target: object, property: string) => {
  Transform(
    ({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
      const value = obj[key];
      return typeof value === 'function' ? (value as () => unknown)() : value;
    },
    { toClassOnly: true },
  )(target, property);
  registerDecorator({
    name: AS_PARSED_RULE,
    target: target.constructor,
    propertyName: property,
    validator: { validate: () => true },
  });
};

const asParsedByClass = new WeakMap<object, string[]>();

/** The AsParsed fields of a DTO class (its own, inherited, or copied by a mapped type). */
function asParsedFields(metatype: object): string[] {
  let fields = asParsedByClass.get(metatype);
  if (!fields) {
    fields = getMetadataStorage()
      .getTargetValidationMetadatas(metatype as new () => unknown, '', true, false)
      .filter((rule) => rule.name === AS_PARSED_RULE)
      .map((rule) => rule.propertyName);
    asParsedByClass.set(metatype, fields);
  }
  return fields;
}

/** A shallow copy of the body with its AsParsed objects boxed (see AsParsed); the body itself is left as sent. */
function boxAsParsed(body: object, metatype: object): object {
  const fields = asParsedFields(metatype);
  if (fields.length === 0) return body;
  const copy: Record<string, unknown> = { ...body };
  for (const field of fields) {
    const value = Object.hasOwn(copy, field) ? copy[field] : undefined;
    if (typeof value === 'object' && value !== null) copy[field] = () => value;
  }
  return copy;
}

const trimStrings = Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));

export interface StringRule {
  optional?: boolean;
  max?: number;
  min?: number;
  allowBlank?: boolean;
  /** Keep surrounding white space (passwords). */
  noTrim?: boolean;
  /** With `optional`: may be absent, but not null (a column that cannot be cleared). */
  notNull?: boolean;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL could not store this text (NUL, or a lone surrogate that is not UTF-8), or null. */
export function unstorableText(value: string): string | null {
  if (value.includes('\u0000')) return 'Null characters are not allowed.';
  if (LONE_SURROGATE.test(value)) return 'Surrogate characters are not allowed.';
  return null;
}

/** A string field with DRF's wording: required, a string, not blank, within length. */
export function StringField(rule: StringRule = {}) {
  const check: Check = (value) => {
    if (value === null && rule.optional && rule.notNull) return 'This field may not be null.';
    if (value === undefined || value === null) return rule.optional ? null : REQUIRED;
    if (typeof value !== 'string') return 'Not a valid string.';
    const unstorable = unstorableText(value);
    if (unstorable) return unstorable;
    // The contract treats a blank required string as a missing one ("query: This field is required.").
    if (!rule.allowBlank && value.trim() === '') return rule.optional ? BLANK : REQUIRED;
    if (rule.max !== undefined && value.length > rule.max)
      return `Ensure this field has no more than ${rule.max} characters.`;
    if (rule.min !== undefined && value.length < rule.min)
      return `Ensure this field has at least ${rule.min} characters.`;
    return null;
  };
  const schema: FieldSchema = {
    type: 'string',
    required: !rule.optional,
    ...(rule.min !== undefined ? { minLength: rule.min } : {}),
    maxLength: rule.max ?? BODY_TEXT_MAX,
  };
  return (target: object, property: string) => {
    if (!rule.noTrim) trimStrings(target, property);
    fieldRule('stringField', check, schema)(target, property);
  };
}

/** An integer in a range; optional unless said otherwise. */
export function IntegerField(rule: { min: number; max: number; optional?: boolean }) {
  return fieldRule(
    'integerField',
    (value) => {
      if (value === undefined || value === null) return rule.optional === false ? REQUIRED : null;
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'A valid integer is required.';
      if (value < rule.min) return `Ensure this value is greater than or equal to ${rule.min}.`;
      if (value > rule.max) return `Ensure this value is less than or equal to ${rule.max}.`;
      return null;
    },
    { ...integerSchema(rule.min, rule.max), required: rule.optional === false },
  );
}

export function BooleanField() {
  return fieldRule(
    'booleanField',
    (value) =>
      value === undefined || value === null || typeof value === 'boolean' ? null : 'Must be a valid boolean.',
    { type: 'boolean', required: false },
  );
}

/**
 * Present, and either null or an ISO 8601 timestamp with a zone that lies in the future. With
 * `unlessAnyOf`, it may be absent when one of those fields of the body is given.
 */
export function FutureTimestampOrNull(rule: { unlessAnyOf?: readonly string[] } = {}) {
  return fieldRule(
    'futureTimestampOrNull',
    (value, args) => {
      if (value === undefined) {
        const body = args.object as Record<string, unknown>;
        return rule.unlessAnyOf?.some((field) => body[field] !== undefined) ? null : REQUIRED;
      }
      if (value === null) return null;
      const date = typeof value === 'string' ? parseZonedTimestamp(value) : null;
      if (!date) return 'Datetime has wrong format. Use ISO 8601 with a time zone, e.g. 2026-12-31T23:59:59Z.';
      if (date.getTime() <= Date.now()) return 'Must be a time in the future.';
      return null;
    },
    {
      type: 'string',
      format: 'date-time',
      nullable: true,
      required: !rule.unlessAnyOf,
      description: 'ISO 8601 with a zone, in the future; null clears it',
    },
  );
}

/** A field the body's DTO does not declare (a misspelling such as `topk`, or a field of another route). */
export const NOT_ALLOWED = 'This field is not allowed.';

export function toFieldErrors(errors: ValidationError[], parent = ''): FieldErrors {
  const fields: FieldErrors = {};
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      // class-validator's own wording ("property topk should not exist") in ours.
      fields[path] = 'whitelistValidation' in error.constraints ? [NOT_ALLOWED] : Object.values(error.constraints);
    }
    Object.assign(fields, toFieldErrors(error.children ?? [], path));
  }
  return fields;
}

const OPEN_BODY = Symbol('acceptsUnknownFields');

/**
 * Marks a body DTO whose unknown fields are dropped instead of refused: the OpenAI-compatible routes,
 * whose clients send OpenAI's other fields (`user`, `top_p`, `tools`…) as a matter of course.
 */
export function AcceptsUnknownFields(): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(OPEN_BODY, true, target);
  };
}

const acceptsUnknownFields = (metatype: unknown): boolean =>
  typeof metatype === 'function' && Reflect.getMetadata(OPEN_BODY, metatype) === true;

const pipeOptions = (forbidUnknown: boolean) => ({
  whitelist: true,
  forbidNonWhitelisted: forbidUnknown,
  transform: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors: ValidationError[]) => new ValidationFailedError(toFieldErrors(errors)),
});

/**
 * Validates JSON bodies against their DTO: a field the DTO does not declare is a 400 naming it
 * (`topk: This field is not allowed.`; dropped instead on a DTO marked `@AcceptsUnknownFields()`), the
 * first bad field is named in `detail`, and a body that is not a JSON object (an array, a string) is
 * refused outright.
 */
@Injectable()
export class BodyValidationPipe extends ValidationPipe {
  private readonly lenient = new ValidationPipe(pipeOptions(false));

  constructor() {
    super(pipeOptions(true));
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body' || !metadata.metatype || metadata.metatype === Object) return value;
    const body = value ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw ValidationFailedError.field('body', 'Expected a JSON object.');
    }
    const parsed = boxAsParsed(body, metadata.metatype);
    if (acceptsUnknownFields(metadata.metatype)) return this.lenient.transform(parsed, metadata);
    // The fields kept as parsed are boxed in functions by now, so only the DTO's own names are checked.
    const reserved = reservedNameIn(parsed, '');
    if (reserved !== null) throw ValidationFailedError.field(reserved, RESERVED_NAME);
    return super.transform(parsed, metadata);
  }
}

export const RESERVED_NAME = 'This name is reserved (every JavaScript object has it); use another.';
/**
 * `constructor`, `toString`, `__proto__`…: the pipe and class-transformer drop them at any depth, so
 * such a field was ignored rather than refused as unknown. Where the keys are the client's data
 * (metadata, filters: AsParsed) they are ordinary names instead.
 */
const RESERVED_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/** The path of the first field (at any depth, in arrays too) named like a member of Object.prototype. */
function reservedNameIn(value: unknown, path: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const [name, child] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${name}]` : path === '' ? name : `${path}.${name}`;
    if (RESERVED_NAMES.has(name)) return at;
    const found = reservedNameIn(child, at);
    if (found !== null) return found;
  }
  return null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);

/**
 * A path id that is not a UUID names nothing: a 404 naming the kind of resource (`Document "x" not
 * found.`, as for a well-formed id that is not there), never a database error.
 */
export class UuidPathPipe implements PipeTransform<string, string> {
  /** `kind` absent (the pipe given as a class, as webhooks do): the plain `Not found.` of their unknown ids. */
  constructor(private readonly kind?: string) {}

  transform(value: string): string {
    if (!isUuid(value)) throw this.kind ? NotFoundError.named(this.kind, value) : new NotFoundError();
    return value.toLowerCase();
  }
}

/** A UUID in a body (an id the caller names); `optional` lets it be absent or null. */
export function UuidField(rule: { optional?: boolean } = {}) {
  return fieldRule(
    'uuidField',
    (value) => {
      if (value === undefined || value === null) return rule.optional ? null : REQUIRED;
      return typeof value === 'string' && isUuid(value) ? null : 'Must be a valid UUID.';
    },
    { type: 'string', format: 'uuid', required: !rule.optional },
  );
}
