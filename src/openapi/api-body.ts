import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtension, ApiExtraModels, getSchemaPath } from '@nestjs/swagger';

/** Per media type, the schema that describes the body (the document builder reads and removes it). */
export const BODY_BY_MEDIA_TYPE = 'x-body-by-media-type';
export type BodyByMediaType = Record<string, string>;

/**
 * A body that is either JSON or a multipart form (document uploads). @nestjs/swagger gives every
 * media type of `@ApiConsumes` the same schema; the document builder then narrows each media type to
 * its own class, so JSON shows `{title, content, metadata?}` and multipart a binary `file`.
 */
export function ApiJsonOrMultipartBody(json: Type<unknown>, multipart: Type<unknown>, description?: string) {
  return applyDecorators(
    ApiExtraModels(json, multipart),
    ApiConsumes('multipart/form-data', 'application/json'),
    ApiBody({
      required: true,
      description,
      schema: { oneOf: [{ $ref: getSchemaPath(json) }, { $ref: getSchemaPath(multipart) }] },
    }),
    ApiExtension(BODY_BY_MEDIA_TYPE, {
      'application/json': getSchemaPath(json),
      'multipart/form-data': getSchemaPath(multipart),
    } satisfies BodyByMediaType),
  );
}
