import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { SLUG_PATTERN } from '../domains/dto/slug.field.js';

type Schema = Record<string, unknown>;

/**
 * The request DTOs validate with our own class-validator rules (src/common/validation.ts), which
 * @nestjs/swagger cannot read. Each rule's name says the JSON type; a property is required when
 * an empty body fails on it. Descriptions can be added with @ApiProperty on a DTO, which wins.
 */
const RULE_SCHEMAS: Record<string, Schema> = {
  stringField: { type: 'string' },
  emailAddress: { type: 'string', format: 'email' },
  newPassword: { type: 'string', format: 'password', minLength: 8 },
  integerField: { type: 'integer' },
  booleanField: { type: 'boolean' },
  futureTimestampOrNull: { type: 'string', format: 'date-time', nullable: true, description: 'ISO 8601 with a zone, in the future; null clears it' },
  metadataField: { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }] }, nullable: true },
  allowedDomains: { type: 'array', items: { type: 'string' }, nullable: true, description: 'domain slugs; null = no restriction' },
  slugField: { type: 'string', pattern: SLUG_PATTERN.source },
};

export function schemaOfDto(dto: new () => object): Schema | null {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  if (metadatas.length === 0) return null;
  const properties: Record<string, Schema> = {};
  for (const metadata of metadatas) {
    const constraints = getMetadataStorage().getTargetValidatorConstraints(metadata.constraintCls);
    const rule = constraints[0]?.name ?? metadata.name ?? metadata.type;
    properties[metadata.propertyName] = { ...(properties[metadata.propertyName] ?? {}), ...(RULE_SCHEMAS[rule] ?? {}) };
  }
  const required = validateSync(plainToInstance(dto, {}), { stopAtFirstError: true })
    .map((error) => error.property)
    .filter((property) => property in properties);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}
