import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, getSchemaPath } from '@nestjs/swagger';

/** Per media type, the schema that describes the body. */
export type BodyByMediaType = Record<string, string>;

/**
 * The bodies with a schema per media type, by operation id (the handler's name): @nestjs/swagger gives
 * every media type of a body one schema, so the document builder narrows these (see openapi.ts).
 */
export const BODY_BY_MEDIA_TYPE = new Map<string, BodyByMediaType>();

/**
 * A body that is either JSON or a multipart form (document uploads). @nestjs/swagger gives every
 * media type of `@ApiConsumes` the same schema; the document builder then narrows each media type to
 * its own class, so JSON shows `{title, content, metadata?}` and multipart a binary `file`.
 */
export function ApiJsonOrMultipartBody(json: Type<unknown>, multipart: Type<unknown>, description?: string) {
  const decorators = applyDecorators(
    ApiExtraModels(json, multipart),
    ApiConsumes('multipart/form-data', 'application/json'),
    ApiBody({
      required: true,
      description,
      schema: { oneOf: [{ $ref: getSchemaPath(json) }, { $ref: getSchemaPath(multipart) }] },
    }),
  );
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
    BODY_BY_MEDIA_TYPE.set(String(key), {
      'application/json': getSchemaPath(json),
      'multipart/form-data': getSchemaPath(multipart),
    });
    decorators(target, key, descriptor);
  };
}
