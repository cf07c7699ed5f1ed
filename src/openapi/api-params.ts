import { ApiParam } from '@nestjs/swagger';
import { SLUG_SCHEMA } from '../domains/dto/slug.field.js';

/** A path id: a UUID (anything else is a 404, never a 500). */
export const ApiUuidParam = (name: string, description: string) => ApiParam({ name, description, schema: { type: 'string', format: 'uuid' } });

/** A path slug of a region or domain (one that cannot exist is a 404). */
export const ApiSlugParam = (name: string, description: string) =>
  ApiParam({ name, description, schema: { ...SLUG_SCHEMA, example: 'medicine' } });
