import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { StartupRefusal } from './common/startup-refusal.js';
import { loadConfigOrReport } from './config/env.schema.js';
import { dashboardBuilt } from './dashboard/dashboard.js';
import { bootSummary } from './lifecycle/boot-summary.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { yieldThreadPool } from './lifecycle/thread-pool-priority.js';

/** The thread pool's niceness: as the extraction workers', below the event loop. */
const THREAD_POOL_NICENESS = 10;

async function main(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(1);
  await yieldThreadPool(THREAD_POOL_NICENESS);
  const app = await createApp(config);
  try {
    // Every interface, as Express did by default (Fastify's default is loopback only).
    await app.listen(config.PORT, '0.0.0.0');
  } catch (error) {
    await app.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new StartupRefusal(`Port ${config.PORT} is in use: stop what listens there, or set PORT to another port.`);
    throw error;
  }
  installGracefulShutdown(app, config);
  const logger = new Logger('Bootstrap');
  for (const line of bootSummary(config, dashboardBuilt(config.DASHBOARD_DIR))) logger.log(line);
}

main().catch((error: unknown) => {
  if (!(error instanceof StartupRefusal)) throw error;
  // A refusal the operator can act on: its message alone, not wrapped in a stack trace.
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
});
