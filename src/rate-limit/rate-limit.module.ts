import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { PrincipalRateLimiter } from './principal-rate-limiter.js';
import { connectRedis, REDIS } from './redis.js';
import { SignInThrottle } from './sign-in-throttle.js';

/** Per-principal request limits and sign-in throttling; global so the auth guard and controller see them. */
@Global()
@Module({
  providers: [
    { provide: REDIS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX) },
    PrincipalRateLimiter,
    SignInThrottle,
  ],
  exports: [PrincipalRateLimiter, SignInThrottle],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
