import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { HttpRequest } from '../common/request.js';
import { CurrentPrincipal, JwtOnly, Public } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { NoStore } from '../common/no-store.decorator.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { clientAddress } from '../common/client-address.js';
import { LimitPerAddress } from '../rate-limit/limit-per-address.js';
import {
  MAX_FAILURES_PER_ADDRESS,
  MAX_FAILURES_PER_EMAIL,
  SIGN_IN_WINDOW_MS,
  SignInThrottle,
} from '../rate-limit/sign-in-throttle.js';
import { CredentialsDto, LogoutDto, RefreshDto, SwitchOrganizationDto, VerifyDto } from './dto/auth.dto.js';
import { AccessTokenResponse, TokenPairResponse } from './dto/auth.response.js';
import { TokensService } from './tokens.service.js';
import { UsersService } from './users.service.js';
import { ApiController } from '../openapi/api-controller.js';

const TOKEN_INVALID = {
  description: 'The token is malformed, tampered, expired, revoked or of the wrong type.',
  examples: ['tokenInvalid'],
} as const;
const TOKEN_CALLS_THROTTLED =
  'Too many refresh, verify and logout calls from this address (`TOKEN_LIMIT_PER_MINUTE`); `Retry-After` says when to try again.';

/** simplejwt's endpoints: create, refresh, verify, and logout (refresh-token revocation). */
@ApiController('auth')
@Controller('auth/jwt')
@Public()
export class JwtController {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly throttle: SignInThrottle,
  ) {}

  @Post('create')
  @NoStore()
  @HttpCode(200)
  @LimitPerAddress('signin')
  @ApiOperation({ summary: 'Sign in with e-mail and password: a JWT access and refresh token pair' })
  @ApiOkResponse({ type: TokenPairResponse })
  @ApiErrors({
    401: { description: 'Wrong e-mail or password, or an inactive account.', examples: ['invalidCredentials'] },
    404: 'The user is not a member of the organization named by `organization_id`.',
    429:
      `After ${MAX_FAILURES_PER_EMAIL} failed attempts for one e-mail (or ${MAX_FAILURES_PER_ADDRESS} from one address) within ${SIGN_IN_WINDOW_MS / 60_000} minutes, until that window passes ` +
      '(each attempt is counted before the password is checked, so concurrent guesses cannot exceed it); also past `SIGNIN_LIMIT_PER_MINUTE` attempts from one address. `Retry-After` says when.',
  })
  async createToken(
    @Body() body: CredentialsDto,
    @Req() request: HttpRequest,
  ): Promise<{ access: string; refresh: string }> {
    const user = await this.throttle.attempt(body.email, clientAddress(request), () =>
      this.users.authenticate(body.email, body.password),
    );
    return this.tokens.issuePair(user.id, await this.users.organizationForSignIn(user, body.organization_id ?? null));
  }

  @Post('switch')
  @JwtOnly('viewer')
  @NoStore()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Act in another organization: a new token pair for it',
    description:
      'The new tokens carry `organization_id`; the ones sent keep acting in their own organization until they expire. ' +
      'A later sign-in without `organization_id` acts in the organization switched to last.',
  })
  @ApiOkResponse({ type: TokenPairResponse })
  @ApiErrors({ 404: { description: 'The caller is not a member of that organization.' } })
  async switchOrganization(
    @CurrentPrincipal() caller: Principal,
    @Body() body: SwitchOrganizationDto,
  ): Promise<{ access: string; refresh: string }> {
    const organizationId = await this.users.switchTo(caller.userId, body.organization_id);
    return this.tokens.issuePair(caller.userId, organizationId);
  }

  @Post('refresh')
  @NoStore()
  @HttpCode(200)
  @LimitPerAddress('token')
  @ApiOperation({
    summary: 'A new access token for a valid refresh token',
    description:
      'With `JWT_ROTATE_REFRESH_TOKENS=true` the answer also carries a new `refresh` token and the one sent is revoked; ' +
      'presenting a refresh token that was already rotated revokes every token of its sign-in (reuse detection) and answers 401.',
  })
  @ApiOkResponse({ type: AccessTokenResponse })
  @ApiErrors({ 401: TOKEN_INVALID, 429: TOKEN_CALLS_THROTTLED })
  refreshToken(@Body() body: RefreshDto): Promise<{ access: string; refresh?: string }> {
    return this.tokens.refresh(body.refresh);
  }

  @Post('verify')
  @HttpCode(200)
  @LimitPerAddress('token')
  @ApiOperation({ summary: 'Check that a token (access or refresh) is valid' })
  @ApiOkResponse({
    description: 'Valid: an empty object.',
    schema: { type: 'object', properties: {}, additionalProperties: false, example: {} },
  })
  @ApiErrors({ 401: TOKEN_INVALID, 429: TOKEN_CALLS_THROTTLED })
  async verifyToken(@Body() body: VerifyDto): Promise<Record<string, never>> {
    await this.tokens.verify(body.token);
    return {};
  }

  @Post('logout')
  @HttpCode(204)
  @LimitPerAddress('token')
  @ApiOperation({
    summary: 'Sign out: revoke a refresh token so it can no longer refresh',
    description:
      'With `"all": true`, sign out everywhere: every refresh token of the user is revoked, and access tokens issued ' +
      'before are refused on every instance within a second. The valid refresh token sent is what proves the caller.',
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors({ 401: TOKEN_INVALID, 429: TOKEN_CALLS_THROTTLED })
  async logout(@Body() body: LogoutDto): Promise<void> {
    await this.tokens.logout(body.refresh, body.all === true);
  }
}
