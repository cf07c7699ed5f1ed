import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { CompositeAuthGuard } from './composite-auth.guard.js';
import { JWT_SECRET, resolveJwtSecret } from './jwt-secret.js';
import { JwtController } from './jwt.controller.js';
import { PermissionsGuard } from './permissions.guard.js';
import { PasswordHasher } from './password-hasher.js';
import { RefreshTokenPurger } from './refresh-token-purger.js';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';
import { AccountCache } from './account-cache.js';
import { MembershipCache } from './membership-cache.js';
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
    // Global guards, installed in their order by request-pipeline.ts.
    CompositeAuthGuard,
    PermissionsGuard,
    PasswordHasher,
    AccountCache,
    MembershipCache,
    TokensService,
    RefreshTokenPurger,
    UsersService,
    UsersRepository,
    RefreshTokensRepository,
    JwtAccessStrategy,
    ApiKeyStrategy,
  ],
  exports: [UsersService, PasswordHasher, MembershipCache, AccountCache, TokensService],
})
export class AuthModule {}
