import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { IdempotencyGuard } from '../idempotency/idempotency.guard.js';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard.js';
import { AdminOnlyGuard } from './admin-only.guard.js';
import { CompositeAuthGuard } from './composite-auth.guard.js';
import { JWT_SECRET, resolveJwtSecret } from './jwt-secret.js';
import { JwtController } from './jwt.controller.js';
import { ScopeGuard } from './scope.guard.js';
import { PasswordHasher } from './password-hasher.js';
import { RefreshTokenPurger } from './refresh-token-purger.js';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';
import { AccountCache } from './account-cache.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtAccessStrategy } from './strategies/jwt-access.strategy.js';
import { TokensService } from './tokens.service.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';
import { User } from './user.entity.js';
import { RefreshToken } from './refresh-token.entity.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([User, RefreshToken]),
    PassportModule,
    ApiKeysModule,
    OrganizationsModule,
    JwtModule.registerAsync({
      inject: [JWT_SECRET],
      extraProviders: [{ provide: JWT_SECRET, inject: [APP_CONFIG], useFactory: resolveJwtSecret }],
      useFactory: (secret: string) => ({ secret, signOptions: { algorithm: 'HS256' } }),
    }),
  ],
  controllers: [JwtController, UsersController],
  providers: [
    { provide: JWT_SECRET, inject: [APP_CONFIG], useFactory: (config: AppConfig) => resolveJwtSecret(config) },
    // Global guards run in this order: who is calling, whether they are over their limit, whether
    // the route admits them (a key's scope, then admin rights; a refused request still counts and still
    // gets the RateLimit-* headers), and whether an Idempotency-Key makes it a replay.
    { provide: APP_GUARD, useClass: CompositeAuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: ScopeGuard },
    { provide: APP_GUARD, useClass: AdminOnlyGuard },
    { provide: APP_GUARD, useClass: IdempotencyGuard },
    PasswordHasher,
    AccountCache,
    TokensService,
    RefreshTokenPurger,
    UsersService,
    UsersRepository,
    RefreshTokensRepository,
    JwtAccessStrategy,
    ApiKeyStrategy,
  ],
  exports: [UsersService, PasswordHasher],
})
export class AuthModule {}
