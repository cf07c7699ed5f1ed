import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config/env.schema.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const app = await createApp(config);
  await app.listen(config.PORT);
  installGracefulShutdown(app, config);
  const store = config.DATABASE_URL ? 'PostgreSQL' : `the embedded store in ${config.DATA_DIR}`;
  new Logger('Bootstrap').log(`listening on port ${config.PORT}, data in ${store}`);
}

void main();
