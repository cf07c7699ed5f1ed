import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { loadConfigOrReport } from './config/env.schema.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { yieldThreadPool } from './lifecycle/thread-pool-priority.js';

/** The thread pool's niceness: as the extraction workers', below the event loop. */
const THREAD_POOL_NICENESS = 10;

async function main(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(1);
  await yieldThreadPool(THREAD_POOL_NICENESS);
  const app = await createApp(config);
  // Every interface, as Express did by default (Fastify's default is loopback only).
  await app.listen(config.PORT, '0.0.0.0');
  installGracefulShutdown(app, config);
  const store = config.DATABASE_URL ? 'PostgreSQL' : `the embedded store in ${config.DATA_DIR}`;
  new Logger('Bootstrap').log(`listening on port ${config.PORT}, data in ${store}`);
}

void main();
