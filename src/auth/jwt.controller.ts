import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '../common/auth.decorators.js';
import { SignInThrottle } from '../rate-limit/sign-in-throttle.js';
import { CredentialsDto, RefreshDto, VerifyDto } from './dto/auth.dto.js';
import { TokensService } from './tokens.service.js';
import { UsersService } from './users.service.js';

/** simplejwt's endpoints: create, refresh, verify, and logout (refresh-token revocation). */
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
  async create(@Body() body: CredentialsDto, @Req() request: Request): Promise<{ access: string; refresh: string }> {
    const user = await this.throttle.attempt(body.email, request.ip, () => this.users.authenticate(body.email, body.password));
    return this.tokens.issuePair(user.id);
  }

  @Post('refresh')
  @HttpCode(200)
  refresh(@Body() body: RefreshDto): Promise<{ access: string }> {
    return this.tokens.refresh(body.refresh);
  }

  @Post('verify')
  @HttpCode(200)
  async verify(@Body() body: VerifyDto): Promise<Record<string, never>> {
    await this.tokens.verify(body.token);
    return {};
  }

  @Post('logout')
  @HttpCode(204)
  async logout(@Body() body: RefreshDto): Promise<void> {
    await this.tokens.logout(body.refresh);
  }
}
