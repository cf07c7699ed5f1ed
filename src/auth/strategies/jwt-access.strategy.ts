import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { HttpRequest } from '../../common/request.js';
import { Strategy } from 'passport-jwt';
import { AccessTokenInvalidError } from '../../common/errors.js';
import type { Principal } from '../../common/principal.js';
import { AccountCache } from '../account-cache.js';
import { MembershipCache } from '../membership-cache.js';
import { presentedJwt } from '../credential.js';
import { JWT_SECRET } from '../jwt-secret.js';
import { principalOf } from '../principal.js';
import { issuedBeforeCutOff } from '../sessions.js';
import type { TokenClaims } from '../tokens.service.js';
import { VerifiedTokenCache } from '../verified-token-cache.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Passport's typings name Express's request; at run time it is Fastify's. */
type PassportRequest = Parameters<Strategy['authenticate']>[0];
/** The token as the composite guard read it (credential.ts): passport-jwt does not parse the header again. */
const bearerToken = (request: PassportRequest) => presentedJwt(request as unknown as HttpRequest);

/** Bearer access tokens: HS256 only (so `alg: none` fails), unexpired, and of type `access`. */
@Injectable()
export class JwtAccessStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly verified = new VerifiedTokenCache();

  constructor(
    @Inject(JWT_SECRET) secret: string,
    private readonly accounts: AccountCache,
    private readonly memberships: MembershipCache,
  ) {
    // A KeyObject built once: given the string, jsonwebtoken rebuilds one on every request (~8% of CPU
    // under load). jsonwebtoken takes a KeyObject; passport-jwt's typings only admit string | Buffer.
    const key = createSecretKey(Buffer.from(secret)) as unknown as Buffer;
    super({
      jwtFromRequest: bearerToken,
      secretOrKeyProvider: (_request: unknown, _token: unknown, done: (error: null, key: Buffer) => void) =>
        done(null, key),
      algorithms: ['HS256'],
      passReqToCallback: true,
    });
  }

  /** A token whose signature and claims were verified before and that has not expired. */
  isKnown(token: string): boolean {
    return this.verified.get(token) !== undefined;
  }

  /** Passport's entry point: a token verified before goes straight to the account lookup. */
  override authenticate(request: PassportRequest, options?: object): void {
    const token = bearerToken(request);
    const known = token ? this.verified.get(token) : undefined;
    if (!known) {
      super.authenticate(request, options);
      return;
    }
    this.principalFor(known.userId, known.issuedAt, known.organizationId).then(
      (principal) => this.success(principal),
      (error: unknown) => this.error(error as Error),
    );
  }

  /** Called by passport-jwt once the signature and expiry are good. */
  async validate(request: HttpRequest, claims: Partial<TokenClaims>): Promise<Principal> {
    // A refresh token is well signed too: its type is what keeps it off authenticated routes.
    const userId = claims.user_id;
    if (
      claims.token_type !== 'access' ||
      typeof userId !== 'string' ||
      !UUID.test(userId) ||
      typeof claims.exp !== 'number' ||
      (claims.organization_id !== undefined &&
        (typeof claims.organization_id !== 'string' || !UUID.test(claims.organization_id)))
    ) {
      throw new AccessTokenInvalidError();
    }
    // Lower-cased as stored (a cache keyed on another spelling would not hear of a removal).
    const organizationId = claims.organization_id?.toLowerCase() ?? null;
    const principal = await this.principalFor(userId, claims.iat, organizationId);
    // passport-jwt verified this token, read once (credential.ts) for everyone.
    const token = presentedJwt(request);
    if (token) {
      this.verified.remember(token, {
        userId,
        organizationId,
        issuedAt: Number(claims.iat),
        expiresAtMs: claims.exp * 1000,
      });
    }
    return principal;
  }

  /**
   * The token acts in its `organization_id` (one issued before teams has none: the user's own), with
   * the role the user has there now. A user no longer a member there (removed, or left) has no role:
   * the token stops acting, as a signed-out one does.
   */
  private async principalFor(
    userId: string,
    issuedAt: number | undefined,
    tokenOrganizationId: string | null,
  ): Promise<Principal> {
    const account = await this.accounts.get(userId);
    // Signed out everywhere (or promoted, or a new password) since this token was issued.
    if (!account || issuedBeforeCutOff(issuedAt, account.tokensValidAfter)) throw new AccessTokenInvalidError();
    const organizationId = tokenOrganizationId ?? account.organizationId;
    // Issued before the user (re)joined that organization: from a membership that ended.
    const role = await this.memberships.roleOf(organizationId, userId, issuedAt);
    if (!role) throw new AccessTokenInvalidError();
    return principalOf({ account, organizationId, role });
  }
}
