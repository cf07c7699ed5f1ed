import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics.js';

/**
 * `GET /metrics` on its own port (METRICS_PORT), so the public listener never serves it: Prometheus
 * scrapes the pod directly and the ingress cannot route to it by mistake. A bare node:http server: one
 * route, no authentication, nothing of the API's pipeline (a scrape is not an API request to count).
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: this port serves GET /metrics only.\n');
      return;
    }
    registry.metrics().then(
      (text) =>
        response.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(text),
      () => response.writeHead(500, { 'Content-Type': 'text/plain' }).end('The metrics could not be collected.\n'),
    );
  });

  constructor(private readonly port: number) {}

  /** `http://127.0.0.1:<port>` once listening (the port is the OS's pick when METRICS_PORT=0). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async onApplicationBootstrap(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '0.0.0.0', () => resolve());
    });
    new Logger('Metrics').log(`GET /metrics on port ${(this.server.address() as AddressInfo).port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
