import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { TokenInvalidError } from '../common/errors.js';
import { RefreshToken } from './refresh-token.entity.js';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  token_type: TokenType;
  user_id: string;
  jti: string;
  iat: number;
  exp: number;
}

/** Issues and checks simplejwt-compatible HS256 tokens; refresh tokens are recorded so they can be revoked. */
@Injectable()
export class TokensService {
  constructor(
    private readonly jwt: JwtService,
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issuePair(userId: string): Promise<{ access: string; refresh: string }> {
    const jti = randomUUID();
    const refresh = this.sign('refresh', userId, jti, this.config.JWT_REFRESH_TTL_SECONDS);
    const expiresAt = new Date(Date.now() + this.config.JWT_REFRESH_TTL_SECONDS * 1000);
    await this.dataSource.getRepository(RefreshToken).insert({ jti, userId, expiresAt, revokedAt: null });
    return { access: this.issueAccess(userId), refresh };
  }

  issueAccess(userId: string): string {
    return this.sign('access', userId, randomUUID(), this.config.JWT_ACCESS_TTL_SECONDS);
  }

  /** A new access token for a valid, unrevoked refresh token whose user is still active. */
  async refresh(refreshToken: string): Promise<{ access: string }> {
    const claims = await this.verifyRefresh(refreshToken);
    return { access: this.issueAccess(claims.user_id) };
  }

  /** simplejwt's verify: any well-signed, unexpired token; a refresh token must also be unrevoked. */
  async verify(token: string): Promise<void> {
    const claims = this.decode(token);
    if (claims.token_type === 'refresh') await this.verifyRefresh(token);
  }

  async logout(refreshToken: string): Promise<void> {
    const claims = await this.verifyRefresh(refreshToken);
    await this.dataSource.getRepository(RefreshToken).update({ jti: claims.jti }, { revokedAt: new Date() });
  }

  private async verifyRefresh(token: string): Promise<TokenClaims> {
    const claims = this.decode(token);
    if (claims.token_type !== 'refresh') throw new TokenInvalidError();
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM refresh_tokens r JOIN users u ON u.id = r.user_id AND u.is_active
        WHERE r.jti = $1 AND r.user_id = $2 AND r.revoked_at IS NULL AND r.expires_at > now()`,
      [claims.jti, claims.user_id],
    );
    if (rows.length === 0) throw new TokenInvalidError();
    return claims;
  }

  /** Signature (HS256 only: `alg: none` and others are refused), expiry and claim shape. */
  private decode(token: string): TokenClaims {
    let claims: Partial<TokenClaims>;
    try {
      claims = this.jwt.verify<TokenClaims>(token, { algorithms: ['HS256'] });
    } catch {
      throw new TokenInvalidError();
    }
    const uuidLike = /^[0-9a-f-]{36}$/i;
    if ((claims.token_type !== 'access' && claims.token_type !== 'refresh') || !uuidLike.test(String(claims.user_id)) || !uuidLike.test(String(claims.jti))) {
      throw new TokenInvalidError();
    }
    return claims as TokenClaims;
  }

  private sign(tokenType: TokenType, userId: string, jti: string, ttlSeconds: number): string {
    return this.jwt.sign({ token_type: tokenType, user_id: userId, jti }, { expiresIn: ttlSeconds, algorithm: 'HS256' });
  }
}
