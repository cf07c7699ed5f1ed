import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';

type Schema = Record<string, unknown>;

/**
 * The request DTOs validate with our own class-validator rules (src/common/validation.ts), which
 * @nestjs/swagger cannot read. A rule carries its schema (type and limits) or its name says the JSON
 * type; a property is required when an empty body fails on it. Descriptions can be added with @ApiProperty on a DTO, which wins.
 */
const RULE_SCHEMAS: Record<string, Schema> = {
  emailAddress: { type: 'string', format: 'email' },
  newPassword: { type: 'string', format: 'password', minLength: 8 },
  booleanField: { type: 'boolean' },
  futureTimestampOrNull: { type: 'string', format: 'date-time', nullable: true, description: 'ISO 8601 with a zone, in the future; null clears it' },
};

export function schemaOfDto(dto: new () => object): Schema | null {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  if (metadatas.length === 0) return null;
  const properties: Record<string, Schema> = {};
  for (const metadata of metadatas) {
    const constraints = getMetadataStorage().getTargetValidatorConstraints(metadata.constraintCls);
    const rule = constraints[0]?.name ?? metadata.name ?? metadata.type;
    // The rule's own schema (its limits, from the same options the check uses), else its kind's.
    const declared = (metadata.constraints?.[0] as Schema | undefined) ?? RULE_SCHEMAS[rule] ?? {};
    properties[metadata.propertyName] = { ...(properties[metadata.propertyName] ?? {}), ...declared };
  }
  const required = validateSync(plainToInstance(dto, {}), { stopAtFirstError: true })
    .map((error) => error.property)
    .filter((property) => property in properties);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}
