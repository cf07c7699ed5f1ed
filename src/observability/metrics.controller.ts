import { Controller, Get, Header } from '@nestjs/common';
import { Public } from '../common/auth.decorators.js';
import { registry } from './metrics.js';

/**
 * Prometheus scrape endpoint. Public, like /health/: it carries no user data, only counts and
 * latencies by route pattern. Keep it reachable from the cluster only (see docs/OPERATIONS.md).
 */
@Controller('metrics')
@Public()
export class MetricsController {
  @Get()
  @Header('Content-Type', registry.contentType)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return registry.metrics();
  }
}
