import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { loadConfigOrReport } from './config/env.schema.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';

async function main(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(1);
  const app = await createApp(config);
  // Every interface, as Express did by default (Fastify's default is loopback only).
  await app.listen(config.PORT, '0.0.0.0');
  installGracefulShutdown(app, config);
  const store = config.DATABASE_URL ? 'PostgreSQL' : `the embedded store in ${config.DATA_DIR}`;
  new Logger('Bootstrap').log(`listening on port ${config.PORT}, data in ${store}`);
}

void main();
