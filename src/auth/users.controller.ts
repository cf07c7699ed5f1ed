import { Body, Controller, Get, Inject, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { Authenticated, CurrentPrincipal, Public } from '../common/auth.decorators.js';
import { NotFoundError, PermissionDeniedError, ValidationFailedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { LimitPerAddress } from '../rate-limit/limit-per-address.js';
import { MembershipCache } from './membership-cache.js';
import { AccountCache } from './account-cache.js';
import { RegisterDto } from './dto/auth.dto.js';
import { CurrentUserResponse, RegisteredUserResponse } from './dto/auth.response.js';
import { EMAIL_TAKEN, UsersService } from './users.service.js';
import { ApiController } from '../openapi/api-controller.js';

@ApiController('auth')
@Authenticated({ role: 'viewer' })
@Controller('auth/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly accounts: AccountCache,
    private readonly memberships: MembershipCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @Public()
  @LimitPerAddress('signup')
  @ApiOperation({ summary: 'Register a user, with a new organization the user owns' })
  @ApiCreatedResponse({ type: RegisteredUserResponse })
  @ApiErrors({
    400: {
      description: 'E-mail missing, invalid or taken; password under 8 characters or all digits.',
      bodies: {
        emailTaken: ValidationFailedError.field('email', EMAIL_TAKEN).body(),
        weakPassword: ValidationFailedError.field('password', 'This password is entirely numeric.').body(),
      },
    },
    403: 'Sign-up is turned off (`ALLOW_SIGNUP=false`).',
    429: 'Past `SIGNUP_LIMIT_PER_HOUR` sign-ups from one address; `Retry-After` says when to try again.',
  })
  async registerUser(@Body() body: RegisterDto): Promise<{ id: string; email: string }> {
    if (!this.config.ALLOW_SIGNUP) throw new PermissionDeniedError();
    const user = await this.users.register(body.email, body.password);
    return { id: user.id, email: user.email };
  }

  /** The account behind the credential, JWT or API key (`is_admin` is the account's flag either way). */
  @Get('me')
  @ApiOperation({
    summary: 'The account behind the credential (JWT or API key)',
    description:
      '`organization_id` and `role` are those of the organization the credential acts in (a JWT: its active one; a key: the one it was made in); `organizations` lists every organization the user belongs to.',
  })
  @ApiOkResponse({ type: CurrentUserResponse })
  @ApiErrors({ 404: 'The account no longer exists.' })
  async getCurrentUser(@CurrentPrincipal() caller: Principal) {
    const account = await this.accounts.get(caller.userId);
    if (!account) throw NotFoundError.named('User', caller.userId);
    return {
      id: account.id,
      email: account.email,
      is_admin: account.isAdmin,
      organization_id: caller.organizationId,
      role: caller.role,
      organizations: await this.memberships.organizationsOf(caller.userId),
    };
  }
}
