import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { CurrentPrincipal, JwtOnly } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { parseZonedTimestamp } from '../common/timestamps.js';
import { UuidPathPipe } from '../common/validation.js';
import { ApiKeysService } from './api-keys.service.js';
import type { ApiKeyRecord } from './api-key.presenter.js';
import { CreateApiKeyDto, RotateApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto.js';

/** Key management: a JWT access token only (spec 5.3.8), and only the caller's own keys. */
@Controller('v1/billings/api-keys')
@JwtOnly()
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  list(@CurrentPrincipal() caller: Principal): Promise<ApiKeyRecord[]> {
    return this.apiKeys.list(caller.userId);
  }

  @Post()
  create(@CurrentPrincipal() caller: Principal, @Body() body: CreateApiKeyDto): Promise<ApiKeyRecord> {
    return this.apiKeys.create(caller, body.name);
  }

  @Patch(':keyId/update')
  update(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
    @Body() body: UpdateApiKeyDto,
  ): Promise<ApiKeyRecord> {
    const expiresAt = body.expires_at === null ? null : parseZonedTimestamp(body.expires_at);
    return this.apiKeys.updateExpiry(caller.userId, keyId, expiresAt);
  }

  @Post(':keyId/rotate')
  rotate(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
    @Body() body: RotateApiKeyDto,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.rotate(caller.userId, keyId, body.grace_period_seconds ?? 0);
  }

  @Post(':keyId/revoke')
  @HttpCode(200)
  revoke(@CurrentPrincipal() caller: Principal, @Param('keyId', UuidPathPipe) keyId: string): Promise<ApiKeyRecord> {
    return this.apiKeys.revoke(caller.userId, keyId);
  }

  @Delete(':keyId')
  @HttpCode(204)
  async remove(@CurrentPrincipal() caller: Principal, @Param('keyId', UuidPathPipe) keyId: string): Promise<void> {
    await this.apiKeys.revoke(caller.userId, keyId);
  }
}
