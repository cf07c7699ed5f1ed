import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { TokenInvalidError } from '../common/errors.js';
import { AccountCache } from './account-cache.js';
import { MembershipCache } from './membership-cache.js';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';
import { afterCutOff } from './sessions.js';
import { UsersRepository } from './users.repository.js';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  token_type: TokenType;
  user_id: string;
  /** The organization the token acts in; absent from tokens issued before teams (the user's own). */
  organization_id?: string;
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
    private readonly refreshTokens: RefreshTokensRepository,
    private readonly users: UsersRepository,
    private readonly accounts: AccountCache,
    private readonly memberships: MembershipCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A new sign-in (or a switch of organization): an access token and the first refresh token of a new family. */
  async issuePair(userId: string, organizationId: string): Promise<{ access: string; refresh: string }> {
    const jti = randomUUID();
    const refresh = this.sign('refresh', userId, organizationId, jti, this.config.JWT_REFRESH_TTL_SECONDS);
    await this.refreshTokens.insertFirst(jti, userId, this.refreshExpiry());
    return { access: this.issueAccess(userId, organizationId), refresh };
  }

  issueAccess(userId: string, organizationId: string | undefined): string {
    return this.sign('access', userId, organizationId, randomUUID(), this.config.JWT_ACCESS_TTL_SECONDS);
  }

  /**
   * The organization a refreshed token acts in: the refresh token's own (none for one issued before
   * teams: the user's own, as its access tokens did). A user no longer a member there gets the 401 of
   * a revoked refresh token: its tokens stop acting in that organization.
   */
  private async stillMember(claims: TokenClaims): Promise<void> {
    const organizationId = claims.organization_id ?? (await this.accounts.get(claims.user_id))?.organizationId;
    // Issued before the user (re)joined that organization (`iat`): from a membership that ended.
    if (!organizationId || !(await this.memberships.roleOf(organizationId, claims.user_id, claims.iat)))
      throw new TokenInvalidError();
  }

  /**
   * A new access token for a valid, unrevoked refresh token whose user is still active. With
   * JWT_ROTATE_REFRESH_TOKENS also a new refresh token, and the one presented is spent.
   */
  async refresh(refreshToken: string): Promise<{ access: string; refresh?: string }> {
    if (!this.config.JWT_ROTATE_REFRESH_TOKENS) {
      const claims = await this.verifyRefresh(refreshToken);
      await this.stillMember(claims);
      return { access: this.issueAccess(claims.user_id, claims.organization_id) };
    }
    const claims = this.decodeRefresh(refreshToken);
    await this.stillMember(claims);
    const jti = randomUUID();
    if (!(await this.refreshTokens.rotate(claims.jti, claims.user_id, jti, this.refreshExpiry()))) {
      await this.revokeFamilyIfReused(claims);
      throw new TokenInvalidError();
    }
    const refresh = this.sign(
      'refresh',
      claims.user_id,
      claims.organization_id,
      jti,
      this.config.JWT_REFRESH_TTL_SECONDS,
    );
    return { access: this.issueAccess(claims.user_id, claims.organization_id), refresh };
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
      await this.dataSource.transaction((manager) => this.users.endAllSessions(manager, claims.user_id, at));
      this.accounts.forget(claims.user_id);
      await afterCutOff(at);
      return;
    }
    await this.refreshTokens.revoke(claims.jti);
  }

  private async verifyRefresh(token: string, { detectReuse = true } = {}): Promise<TokenClaims> {
    const claims = this.decodeRefresh(token);
    if (await this.refreshTokens.isUsable(claims.jti, claims.user_id)) return claims;
    if (detectReuse) await this.revokeFamilyIfReused(claims);
    throw new TokenInvalidError();
  }

  /**
   * A refresh token that a rotation already replaced is presented again: one of its two holders is
   * not its owner, and which one cannot be told. Every token of its family (the sign-in it descends
   * from) is revoked, so both must sign in again.
   */
  private async revokeFamilyIfReused(claims: TokenClaims): Promise<void> {
    await this.refreshTokens.revokeFamilyIfReplaced(claims.jti, claims.user_id);
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
    if (
      (claims.token_type !== 'access' && claims.token_type !== 'refresh') ||
      !uuidLike.test(String(claims.user_id)) ||
      !uuidLike.test(String(claims.jti)) ||
      (claims.organization_id !== undefined && !uuidLike.test(claims.organization_id))
    ) {
      throw new TokenInvalidError();
    }
    // Lower-cased as stored (a cache keyed on another spelling would not hear of a removal).
    if (claims.organization_id !== undefined) claims.organization_id = claims.organization_id.toLowerCase();
    return claims as TokenClaims;
  }

  private sign(
    tokenType: TokenType,
    userId: string,
    organizationId: string | undefined,
    jti: string,
    ttlSeconds: number,
  ): string {
    const claims = {
      token_type: tokenType,
      user_id: userId,
      ...(organizationId ? { organization_id: organizationId } : {}),
      jti,
    };
    return this.jwt.sign(claims, { expiresIn: ttlSeconds, algorithm: 'HS256' });
  }
}
