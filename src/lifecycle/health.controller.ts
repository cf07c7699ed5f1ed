import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import { ApiProbeController } from './probe-documentation.js';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { DataSource } from 'typeorm';
import type { HttpReply } from '../common/request.js';
import { Public } from '../common/auth.decorators.js';
import { toIsoWithOffset } from '../common/timestamps.js';
import { HealthResponse, NotReadyResponse } from './dto/health.response.js';
import { READINESS_CONNECTION } from './readiness-connection.js';
import { ShutdownState } from './shutdown-state.js';

const PING_TIMEOUT_MS = 2_000;

@ApiProbeController('health', { usesDatabase: true })
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
    @Inject(READINESS_CONNECTION) private readonly readinessConnection: DataSource,
  ) {}

  /** Readiness: the database answers a ping within two seconds and the process is not shutting down. */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database answers within two seconds and the instance is not shutting down' })
  @ApiOkResponse({ type: HealthResponse })
  @ApiServiceUnavailableResponse({
    type: NotReadyResponse,
    description: 'Not ready: take the instance out of rotation (it recovers by itself).',
  })
  async getReadiness(@Res({ passthrough: true }) response: HttpReply) {
    const timestamp = toIsoWithOffset(new Date());
    if (this.shutdown.draining) {
      response.status(503);
      return { status: 'error', detail: 'The service is shutting down.', timestamp };
    }
    try {
      await this.health.check([
        () =>
          this.database.pingCheck('database', { connection: this.readinessConnection }).withTimeout(PING_TIMEOUT_MS),
      ]);
      return { status: 'ok', timestamp };
    } catch {
      response.status(503);
      return { status: 'error', detail: 'The database is not answering.', timestamp };
    }
  }
}
