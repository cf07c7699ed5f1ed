import { Body, Controller, Get, Inject, Post } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { CurrentPrincipal, Public } from '../common/auth.decorators.js';
import { NotFoundError, PermissionDeniedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { AccountCache } from './account-cache.js';
import { RegisterDto } from './dto/auth.dto.js';
import { UsersService } from './users.service.js';

@Controller('auth/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly accounts: AccountCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @Public()
  async register(@Body() body: RegisterDto): Promise<{ id: string; email: string }> {
    if (!this.config.ALLOW_SIGNUP) throw new PermissionDeniedError();
    const user = await this.users.register(body.email, body.password);
    return { id: user.id, email: user.email };
  }

  /** The account behind the credential, JWT or API key (`is_admin` is the account's flag either way). */
  @Get('me')
  async me(@CurrentPrincipal() caller: Principal) {
    const account = await this.accounts.get(caller.userId);
    if (!account) throw new NotFoundError();
    return { id: account.id, email: account.email, is_admin: account.isAdmin, organization_id: account.organizationId };
  }
}
