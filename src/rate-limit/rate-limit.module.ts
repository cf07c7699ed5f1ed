import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { AddressLimits } from './address-limits.js';
import { CounterStore } from './counter-store.js';
import { AddressLimitGuard } from './limit-per-address.js';
import { PrincipalRateLimiter } from './principal-rate-limiter.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { connectRedis, REDIS } from './redis.js';
import { SignInThrottle } from './sign-in-throttle.js';

/** Per-principal request limits, sign-in throttling and the per-address limits before authentication; global so the auth guards and controllers see them. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX),
    },
    CounterStore,
    PrincipalRateLimiter,
    SignInThrottle,
    AddressLimits,
    AddressLimitGuard,
    // A global guard, installed in its order by request-pipeline.ts.
    RateLimitGuard,
  ],
  exports: [PrincipalRateLimiter, SignInThrottle, AddressLimits, AddressLimitGuard],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
