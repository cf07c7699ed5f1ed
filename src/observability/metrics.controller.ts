import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiProbeController } from '../lifecycle/probe-documentation.js';
import { Public } from '../common/auth.decorators.js';
import { registry } from './metrics.js';

/** Prometheus' text for this service's metrics: labelled by route template, method and status, so bounded. */
const METRICS_TEXT_MAX = 10_485_760;

/**
 * Prometheus scrape endpoint. Public, like /health/: it carries no user data, only counts and
 * latencies by route pattern. Keep it reachable from the cluster only (see docs/OPERATIONS.md).
 */
@ApiProbeController('metrics', { usesDatabase: false })
@Controller('metrics')
@Public()
export class MetricsController {
  @Get()
  @ApiOperation({
    summary: 'Prometheus metrics (text exposition format)',
    description:
      'Request counts and latencies by route and status, key verifications, credits spent, database pool use.',
  })
  @ApiOkResponse({
    description: 'The Prometheus text exposition.',
    content: {
      [registry.contentType.split(';')[0]]: {
        schema: { type: 'string', maxLength: METRICS_TEXT_MAX },
        example: '# HELP http_requests_total …\nhttp_requests_total{method="GET",route="/health",status="200"} 3\n',
      },
    },
  })
  @Header('Content-Type', registry.contentType)
  @Header('Cache-Control', 'no-store')
  getMetrics(): Promise<string> {
    return registry.metrics();
  }
}
