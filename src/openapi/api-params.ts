import { ApiParam } from '@nestjs/swagger';

/** A path id: a UUID (anything else is a 404, never a 500). */
export const ApiUuidParam = (name: string, description: string) =>
  ApiParam({ name, description, schema: { type: 'string', format: 'uuid' } });
