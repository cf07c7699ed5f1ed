import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentPrincipal, JwtOnly } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { BadRequestError, ValidationFailedError } from '../common/errors.js';
import { parseZonedTimestamp } from '../common/timestamps.js';
import { UuidPathPipe } from '../common/validation.js';
import { NoStore } from '../common/no-store.decorator.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { ApiKeysService, KEY_LIST_MAX, NOT_ACTIVE } from './api-keys.service.js';
import type { ApiKeyRecord } from './api-key.presenter.js';
import { CreateApiKeyDto, RotateApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto.js';
import { ApiKeyResponse, CreatedApiKeyResponse, RotatedApiKeyResponse } from './dto/api-key.response.js';

const KEY_ID = () => ApiUuidParam('keyId', 'The id of one of your keys.');
const NOT_ACTIVE_BODY = new BadRequestError(NOT_ACTIVE).body();
const NO_SUCH_KEY = { 404: "No such key, or another user's (never revealed)." } as const;

/** Key management: a JWT access token only (spec 5.3.8), and only the caller's own keys. */
@ApiTags('api-keys')
@Controller('v1/billings/api-keys')
@JwtOnly()
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @ApiOperation({
    summary: 'List your API keys, newest first',
    description: `Revoked and rotated keys stay listed with \`is_active: false\`, up to the newest ${KEY_LIST_MAX}. Never carries \`key\`.`,
  })
  @ApiExtraModels(ApiKeyResponse)
  @ApiOkResponse({
    description: 'Your keys, without the full key values.',
    schema: { type: 'array', maxItems: KEY_LIST_MAX, items: { $ref: getSchemaPath(ApiKeyResponse) } },
  })
  listApiKeys(@CurrentPrincipal() caller: Principal): Promise<ApiKeyRecord[]> {
    return this.apiKeys.list(caller.userId);
  }

  @Post()
  @NoStore()
  @ApiOperation({ summary: 'Create an API key; the full key is returned this once' })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse, description: 'The new, active, non-expiring key, with `key`.' })
  createApiKey(@CurrentPrincipal() caller: Principal, @Body() body: CreateApiKeyDto): Promise<ApiKeyRecord> {
    return this.apiKeys.create(caller, body.name);
  }

  @Patch(':keyId/update')
  @ApiOperation({
    summary: "Set or clear a key's expiry",
    description: '`expires_at` must be present: a future ISO 8601 time with a zone, or null for no expiry.',
  })
  @KEY_ID()
  @ApiOkResponse({ type: ApiKeyResponse, description: 'The updated record (no `key`).' })
  @ApiErrors({
    400: {
      description: '`expires_at` missing, malformed or not in the future; or the key is no longer active.',
      bodies: {
        validation: ValidationFailedError.field('expires_at', 'Must be a time in the future.').body(),
        notActive: NOT_ACTIVE_BODY,
      },
    },
    ...NO_SUCH_KEY,
  })
  updateApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
    @Body() body: UpdateApiKeyDto,
  ): Promise<ApiKeyRecord> {
    const expiresAt = body.expires_at === null ? null : parseZonedTimestamp(body.expires_at);
    return this.apiKeys.updateExpiry(caller.userId, keyId, expiresAt);
  }

  @Post(':keyId/rotate')
  @NoStore()
  @ApiOperation({
    summary: 'Rotate a key: a new key with the same name and expiry replaces it',
    description:
      'The body is optional. Without it the old key stops at once; `grace_period_seconds` keeps it working that long (never past its own expiry).',
  })
  @KEY_ID()
  @ApiCreatedResponse({
    type: RotatedApiKeyResponse,
    description: 'The new key, with `key` (once) and `rotated_from`.',
  })
  @ApiErrors({
    400: {
      description: 'The key is revoked, rotated or expired; or `grace_period_seconds` is out of range.',
      bodies: {
        notActive: NOT_ACTIVE_BODY,
        validation: ValidationFailedError.field(
          'grace_period_seconds',
          'Ensure this value is less than or equal to 86400.',
        ).body(),
      },
    },
    ...NO_SUCH_KEY,
  })
  rotateApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
    @Body() body: RotateApiKeyDto,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.rotate(caller.userId, keyId, body.grace_period_seconds ?? 0);
  }

  @Post(':keyId/revoke')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke a key; the record stays, inactive',
    description: 'Rejected at once everywhere. Revoking a revoked key changes nothing.',
  })
  @KEY_ID()
  @ApiOkResponse({ type: ApiKeyResponse, description: 'The record, with `is_active: false`.' })
  @ApiErrors(NO_SUCH_KEY)
  revokeApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.revoke(caller.userId, keyId);
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a key (the same as POST .../revoke/)' })
  @KEY_ID()
  @ApiNoContentResponse({ description: 'Revoked; the record stays in the list, inactive.' })
  @ApiErrors(NO_SUCH_KEY)
  async deleteApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', UuidPathPipe) keyId: string,
  ): Promise<void> {
    await this.apiKeys.revoke(caller.userId, keyId);
  }
}
