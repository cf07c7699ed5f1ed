import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/env.schema.js';
import { buildOpenApiDocument } from './openapi/openapi.js';

/**
 * Writes the OpenAPI document that /openapi.json serves, without a database or a port: Nest's preview
 * mode registers the modules and controllers but runs no provider factory (so TypeORM never
 * connects). `node dist/openapi-export.js [file]` (stdout without a file); used by `npm run generate:api`.
 */
async function main(): Promise<void> {
  const config = loadConfig({});
  const unused = { url: 'postgres://unused', embedded: false, close: async () => {} };
  const app = await NestFactory.create(AppModule.forRoot(config, unused), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  const json = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
  const [file] = process.argv.slice(2);
  if (file) writeFileSync(file, json);
  else process.stdout.write(json);
}

await main();
