import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/auth.decorators.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_EMAIL, SIGN_IN_WINDOW_MS, SignInThrottle } from '../rate-limit/sign-in-throttle.js';
import { CredentialsDto, RefreshDto, VerifyDto } from './dto/auth.dto.js';
import { AccessTokenResponse, TokenPairResponse } from './dto/auth.response.js';
import { TokensService } from './tokens.service.js';
import { UsersService } from './users.service.js';

const TOKEN_INVALID = { description: 'The token is malformed, tampered, expired, revoked or of the wrong type.', examples: ['tokenInvalid'] } as const;

/** simplejwt's endpoints: create, refresh, verify, and logout (refresh-token revocation). */
@ApiTags('auth')
@Controller('auth/jwt')
@Public()
export class JwtController {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly throttle: SignInThrottle,
  ) {}

  @Post('create')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign in with e-mail and password: a JWT access and refresh token pair' })
  @ApiOkResponse({ type: TokenPairResponse })
  @ApiErrors({
    401: { description: 'Wrong e-mail or password, or an inactive account.', examples: ['invalidCredentials'] },
    429: `After ${MAX_FAILURES_PER_EMAIL} failed attempts for one e-mail (or ${MAX_FAILURES_PER_ADDRESS} from one address) within ${SIGN_IN_WINDOW_MS / 60_000} minutes, until that window passes; \`Retry-After\` says when.`,
  })
  async createToken(@Body() body: CredentialsDto, @Req() request: Request): Promise<{ access: string; refresh: string }> {
    const user = await this.throttle.attempt(body.email, request.ip, () => this.users.authenticate(body.email, body.password));
    return this.tokens.issuePair(user.id);
  }

  @Post('refresh')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new access token for a valid refresh token' })
  @ApiOkResponse({ type: AccessTokenResponse })
  @ApiErrors({ 401: TOKEN_INVALID })
  refreshToken(@Body() body: RefreshDto): Promise<{ access: string }> {
    return this.tokens.refresh(body.refresh);
  }

  @Post('verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Check that a token (access or refresh) is valid' })
  @ApiOkResponse({ description: 'Valid: an empty object.', schema: { type: 'object', properties: {}, additionalProperties: false, example: {} } })
  @ApiErrors({ 401: TOKEN_INVALID })
  async verifyToken(@Body() body: VerifyDto): Promise<Record<string, never>> {
    await this.tokens.verify(body.token);
    return {};
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ summary: 'Sign out: revoke a refresh token so it can no longer refresh' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors({ 401: TOKEN_INVALID })
  async logout(@Body() body: RefreshDto): Promise<void> {
    await this.tokens.logout(body.refresh);
  }
}
