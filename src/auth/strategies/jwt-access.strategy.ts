import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AccessTokenInvalidError } from '../../common/errors.js';
import type { Principal } from '../../common/principal.js';
import { JWT_SECRET } from '../jwt-secret.js';
import { PrincipalLoader } from '../principal-loader.js';
import type { TokenClaims } from '../tokens.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Bearer access tokens: HS256 only (so `alg: none` fails), unexpired, and of type `access`. */
@Injectable()
export class JwtAccessStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(JWT_SECRET) secret: string,
    private readonly principals: PrincipalLoader,
  ) {
    super({ jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: secret, algorithms: ['HS256'] });
  }

  async validate(claims: Partial<TokenClaims>): Promise<Principal> {
    // A refresh token is well signed too: its type is what keeps it off authenticated routes.
    if (claims.token_type !== 'access' || !UUID.test(String(claims.user_id))) throw new AccessTokenInvalidError();
    const principal = await this.principals.forUser(claims.user_id!);
    if (!principal) throw new AccessTokenInvalidError();
    return principal;
  }
}
