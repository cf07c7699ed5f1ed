import { ApiProperty } from '@nestjs/swagger';
import { DETAIL_MAX } from '../../common/errors.js';

/** Liveness, and readiness when ready (spec 2.4). */
export class HealthResponse {
  @ApiProperty({ type: 'string', enum: ['ok'] })
  status: 'ok';

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'The current time, with its UTC offset.',
    example: '2026-11-21T09:14:03.482+00:00',
  })
  timestamp: string;
}

/** Readiness when the database does not answer, or the instance is shutting down. */
export class NotReadyResponse {
  @ApiProperty({ type: 'string', enum: ['error'] })
  status: 'error';

  @ApiProperty({ type: 'string', maxLength: DETAIL_MAX, example: 'The database is not answering.' })
  detail: string;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-21T09:14:03.482+00:00' })
  timestamp: string;
}
