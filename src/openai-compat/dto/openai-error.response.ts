import { ApiProperty } from '@nestjs/swagger';
import { DETAIL_MAX } from '../../common/errors.js';

/** What the OpenAI-compatible routes add to every error body, so OpenAI clients raise their own error types. */
export class OpenAiErrorObject {
  @ApiProperty({ type: 'string', maxLength: DETAIL_MAX, description: 'The same text as `detail`.' })
  message: string;

  @ApiProperty({
    type: 'string',
    enum: [
      'invalid_request_error',
      'authentication_error',
      'insufficient_quota',
      'permission_error',
      'not_found_error',
      'rate_limit_error',
      'server_error',
    ],
  })
  type: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 50,
    description:
      "This body's own `code` when it has one (`quota_exhausted`, `token_not_valid`), else one per status (`invalid_value`, `invalid_api_key`, `model_not_found`, …).",
    example: 'model_not_found',
  })
  code: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 200,
    description: 'The first field a 400 names (`messages`, `messages.0.content`), else null.',
  })
  param: string | null;
}
