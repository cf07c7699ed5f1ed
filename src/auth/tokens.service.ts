import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { TokenInvalidError } from '../common/errors.js';
import { AccountCache } from './account-cache.js';
import { RefreshToken } from './refresh-token.entity.js';
import { afterCutOff, endAllSessions } from './sessions.js';

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
    private readonly accounts: AccountCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A new sign-in: an access token and the first refresh token of a new family. */
  async issuePair(userId: string): Promise<{ access: string; refresh: string }> {
    const jti = randomUUID();
    const refresh = this.sign('refresh', userId, jti, this.config.JWT_REFRESH_TTL_SECONDS);
    await this.dataSource.getRepository(RefreshToken).insert({ jti, userId, familyId: jti, expiresAt: this.refreshExpiry(), revokedAt: null });
    return { access: this.issueAccess(userId), refresh };
  }

  issueAccess(userId: string): string {
    return this.sign('access', userId, randomUUID(), this.config.JWT_ACCESS_TTL_SECONDS);
  }

  /**
   * A new access token for a valid, unrevoked refresh token whose user is still active. With
   * JWT_ROTATE_REFRESH_TOKENS also a new refresh token, and the one presented is spent.
   */
  async refresh(refreshToken: string): Promise<{ access: string; refresh?: string }> {
    if (!this.config.JWT_ROTATE_REFRESH_TOKENS) {
      const claims = await this.verifyRefresh(refreshToken);
      return { access: this.issueAccess(claims.user_id) };
    }
    const claims = this.decodeRefresh(refreshToken);
    const jti = randomUUID();
    // One statement: spend the old token (only if still usable) and record its successor in the same
    // family. Two requests racing with one token queue on its row; the second finds it spent: reuse.
    const rows: { user_id: string }[] = await this.dataSource.query(
      `WITH spent AS (
         UPDATE refresh_tokens r SET revoked_at = now(), replaced_by = $3
           FROM users u
          WHERE r.jti = $1 AND r.user_id = $2 AND u.id = r.user_id AND u.is_active
            AND r.revoked_at IS NULL AND r.expires_at > now()
         RETURNING r.user_id, r.family_id
       ), successor AS (
         INSERT INTO refresh_tokens (jti, user_id, family_id, expires_at)
         SELECT $3, user_id, family_id, $4 FROM spent
       )
       SELECT user_id FROM spent`,
      [claims.jti, claims.user_id, jti, this.refreshExpiry()],
    );
    if (rows.length === 0) {
      await this.revokeFamilyIfReused(claims);
      throw new TokenInvalidError();
    }
    const refresh = this.sign('refresh', claims.user_id, jti, this.config.JWT_REFRESH_TTL_SECONDS);
    return { access: this.issueAccess(claims.user_id), refresh };
  }

  /** simplejwt's verify: any well-signed, unexpired token; a refresh token must also be unrevoked. */
  async verify(token: string): Promise<void> {
    const claims = this.decode(token);
    if (claims.token_type === 'refresh') await this.verifyRefresh(token, { detectReuse: false });
  }

  /** Revokes this refresh token; with `all`, every session of its user (sign out everywhere). */
  async logout(refreshToken: string, all = false): Promise<void> {
    const claims = await this.verifyRefresh(refreshToken);
    if (all) {
      const at = new Date();
      await this.dataSource.transaction((manager) => endAllSessions(manager, claims.user_id, at));
      this.accounts.forget(claims.user_id);
      await afterCutOff(at);
      return;
    }
    await this.dataSource.getRepository(RefreshToken).update({ jti: claims.jti }, { revokedAt: new Date() });
  }

  private async verifyRefresh(token: string, { detectReuse = true } = {}): Promise<TokenClaims> {
    const claims = this.decodeRefresh(token);
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM refresh_tokens r JOIN users u ON u.id = r.user_id AND u.is_active
        WHERE r.jti = $1 AND r.user_id = $2 AND r.revoked_at IS NULL AND r.expires_at > now()`,
      [claims.jti, claims.user_id],
    );
    if (rows.length > 0) return claims;
    if (detectReuse) await this.revokeFamilyIfReused(claims);
    throw new TokenInvalidError();
  }

  /**
   * A refresh token that a rotation already replaced is presented again: one of its two holders is
   * not its owner, and which one cannot be told. Every token of its family (the sign-in it descends
   * from) is revoked, so both must sign in again.
   */
  private async revokeFamilyIfReused(claims: TokenClaims): Promise<void> {
    await this.dataSource.query(
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE revoked_at IS NULL
          AND family_id = (SELECT family_id FROM refresh_tokens WHERE jti = $1 AND user_id = $2 AND replaced_by IS NOT NULL)`,
      [claims.jti, claims.user_id],
    );
  }

  private decodeRefresh(token: string): TokenClaims {
    const claims = this.decode(token);
    if (claims.token_type !== 'refresh') throw new TokenInvalidError();
    return claims;
  }

  private refreshExpiry(): Date {
    return new Date(Date.now() + this.config.JWT_REFRESH_TTL_SECONDS * 1000);
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
