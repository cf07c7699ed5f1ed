import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AccessTokenInvalidError } from '../../common/errors.js';
import type { Principal } from '../../common/principal.js';
import { JWT_SECRET } from '../jwt-secret.js';
import { AccountCache } from '../account-cache.js';
import type { TokenClaims } from '../tokens.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Bearer access tokens: HS256 only (so `alg: none` fails), unexpired, and of type `access`. */
@Injectable()
export class JwtAccessStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(JWT_SECRET) secret: string,
    private readonly accounts: AccountCache,
  ) {
    // A KeyObject built once: given the string, jsonwebtoken rebuilds one on every request (~8% of CPU
    // under load). jsonwebtoken takes a KeyObject; passport-jwt's typings only admit string | Buffer.
    const key = createSecretKey(Buffer.from(secret)) as unknown as Buffer;
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKeyProvider: (_request: unknown, _token: unknown, done: (error: null, key: Buffer) => void) => done(null, key),
      algorithms: ['HS256'],
    });
  }

  async validate(claims: Partial<TokenClaims>): Promise<Principal> {
    // A refresh token is well signed too: its type is what keeps it off authenticated routes.
    if (claims.token_type !== 'access' || !UUID.test(String(claims.user_id))) throw new AccessTokenInvalidError();
    const account = await this.accounts.get(claims.user_id!);
    if (!account) throw new AccessTokenInvalidError();
    return { kind: 'jwt', userId: account.id, organizationId: account.organizationId, isAdmin: account.isAdmin, apiKeyId: null, keyPrefix: null };
  }
}
