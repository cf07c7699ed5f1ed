import { Global, Module } from '@nestjs/common';
import type { AppConfig } from './env.schema.js';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Makes the validated configuration injectable as `@Inject(APP_CONFIG)`. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig) {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
