import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentPrincipal, JwtOnly } from '../common/auth.decorators.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { toIsoMicros } from '../common/timestamps.js';
import { BadRequestError, ValidationFailedError } from '../common/errors.js';
import { parseZonedTimestamp } from '../common/timestamps.js';
import { UuidPathPipe } from '../common/validation.js';
import { NoStore } from '../common/no-store.decorator.js';
import { KEY_WITHHELD_NOTICE, WithheldInReplay } from '../idempotency/withheld-in-replay.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { ApiPagination } from '../openapi/page.response.js';
import type { ApiKeyEvent } from './api-key-event.entity.js';
import { ApiKeysService, KEY_LIST_MAX, NOT_ACTIVE, rateLimitAboveCeiling, tooManyKeys } from './api-keys.service.js';
import type { ApiKeyRecord } from './api-key.presenter.js';
import type { KeyChangeableFields } from './api-keys.repository.js';
import { Audit, type AuditContext } from './audit-context.js';
import { CreateApiKeyDto, RotateApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto.js';
import { ApiKeyEventPage, ApiKeyEventResponse } from './dto/api-key-event.response.js';
import { ApiKeyResponse, CreatedApiKeyResponse, RotatedApiKeyResponse } from './dto/api-key.response.js';
import { ApiController } from '../openapi/api-controller.js';

/** What a retry with the same `Idempotency-Key` answers: the full key rests nowhere, so it is not replayed. */
const KEY_REPLAY =
  'Every answer carries `Cache-Control: no-store`. With an `Idempotency-Key`, a retry of the same request is answered the same record without `key`, with `key_withheld` instead (and `Idempotent-Replayed: true`): the full key is never stored, so only the first answer shows it. If that answer was lost, rotate the key.';
const KEY_ID = () => ApiUuidParam('keyId', 'The id of one of your keys.');
const NOT_ACTIVE_BODY = new BadRequestError(NOT_ACTIVE).body();
const NO_SUCH_KEY = { 404: "No such key, or another user's (never revealed)." } as const;
const SETTINGS_INVALID = {
  unknownScope: ValidationFailedError.field(
    'scopes',
    '"admin" is not a valid scope; valid scopes: query, documents:read, documents:write, chat, usage:read, organization:write.',
  ).body(),
  rateLimit: ValidationFailedError.field(
    'rate_limit_per_minute',
    'Ensure this value is greater than or equal to 1.',
  ).body(),
  // With the default ceiling (KEY_RATE_LIMIT_MAX_PER_MINUTE, 6000).
  rateLimitCeiling: rateLimitAboveCeiling(6000).body(),
  metadata: ValidationFailedError.field('metadata', '"plan" must be a string or a number (metadata is flat).').body(),
};

/** The settings a create or update gives, as entity fields (absent ones left out). */
function settingsOf(body: CreateApiKeyDto | UpdateApiKeyDto): Partial<KeyChangeableFields> {
  return {
    ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
    ...(body.rate_limit_per_minute === undefined ? {} : { rateLimitPerMinute: body.rate_limit_per_minute }),
    ...(body.monthly_credit_limit === undefined ? {} : { monthlyCreditLimit: body.monthly_credit_limit }),
    ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
    ...(body.collection_ids === undefined ? {} : { collectionIds: body.collection_ids }),
  };
}

function presentEvent(event: ApiKeyEvent, actorEmail: string | null): ApiKeyEventResponse {
  return Object.assign(new ApiKeyEventResponse(), {
    id: event.id,
    action: event.action,
    key_id: event.keyId,
    key_prefix: event.keyPrefix,
    actor_user_id: event.actorUserId,
    actor_email: actorEmail,
    changes: event.changes,
    request_id: event.requestId,
    ip: event.ip,
    created_at: toIsoMicros(event.createdAt),
  });
}

/** Key management: a JWT access token only (spec 5.3.8), and only the caller's own keys. */
@ApiController('api-keys')
@Controller('v1/billings/api-keys')
@JwtOnly('member')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @JwtOnly('viewer')
  @ApiOperation({
    summary: 'List your API keys in the active organization, newest first',
    description: `Revoked and rotated keys stay listed with \`is_active: false\`, up to the newest ${KEY_LIST_MAX}. Never carries \`key\`.`,
  })
  @ApiExtraModels(ApiKeyResponse)
  @ApiOkResponse({
    description: 'Your keys, without the full key values.',
    schema: { type: 'array', maxItems: KEY_LIST_MAX, items: { $ref: getSchemaPath(ApiKeyResponse) } },
  })
  listApiKeys(@CurrentPrincipal() caller: Principal): Promise<ApiKeyRecord[]> {
    return this.apiKeys.list(caller);
  }

  @Get('events')
  @JwtOnly('admin')
  @ApiOperation({
    summary: "The audit log of your organization's keys, newest first",
    description:
      'One entry per create, update, rotate and revoke (either form), written with the change itself. `changes` lists what an update changed as `[before, after]`. Never carries a key value, hash or token.',
  })
  @ApiPagination()
  @ApiOkResponse({ type: ApiKeyEventPage })
  async listApiKeyEvents(
    @CurrentPrincipal() caller: Principal,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<ApiKeyEventResponse>> {
    const { events, count, emails } = await this.apiKeys.listEvents(caller.organizationId, page);
    return toPage(
      page,
      count,
      events.map((event) => presentEvent(event, event.actorUserId ? (emails.get(event.actorUserId) ?? null) : null)),
    );
  }

  @Post()
  @NoStore()
  @WithheldInReplay('key', KEY_WITHHELD_NOTICE)
  @ApiOperation({
    summary: 'Create an API key; the full key is returned this once',
    description:
      "Optionally limited to `scopes`, with its own `rate_limit_per_minute` (at most the service's `KEY_RATE_LIMIT_MAX_PER_MINUTE`, 6000 by default) and `monthly_credit_limit`, and labelled with `metadata`. " +
      'An organization holds at most `MAX_ACTIVE_KEYS_PER_ORG` active keys (100 by default); rotating a key is never refused for it (the replaced key, even in its grace period, is no longer active).\n\n' +
      KEY_REPLAY,
  })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse, description: 'The new, active, non-expiring key, with `key`.' })
  @ApiErrors({
    400: {
      description:
        "`name` missing or too long; an unknown or repeated scope; a limit out of range (or above the service's ceiling); bad metadata; or the organization already holds `MAX_ACTIVE_KEYS_PER_ORG` active keys.",
      bodies: {
        name: ValidationFailedError.field('name', 'This field is required.').body(),
        ...SETTINGS_INVALID,
        tooManyKeys: new BadRequestError(tooManyKeys(100)).body(),
      },
    },
    404: "`collection_ids` names a collection that is not the organization's.",
  })
  createApiKey(
    @CurrentPrincipal() caller: Principal,
    @Body() body: CreateApiKeyDto,
    @Audit() audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.create(caller, { name: body.name, ...settingsOf(body) }, audit);
  }

  @Patch(':keyId/update')
  @ApiOperation({
    summary: "Change a key's expiry, name, scopes, limits or metadata",
    description:
      'Each field is optional and only the fields given change, but at least one must be given (an empty body is a 400 naming `expires_at`). `expires_at`: a future ISO 8601 time with a zone, or null for no expiry. Takes effect at once on every instance.',
  })
  @KEY_ID()
  @ApiOkResponse({ type: ApiKeyResponse, description: 'The updated record (no `key`).' })
  @ApiErrors({
    400: {
      description:
        'An empty body; `expires_at` malformed or not in the future; a bad name, scope, limit or metadata; or the key is no longer active.',
      bodies: {
        validation: ValidationFailedError.field('expires_at', 'Must be a time in the future.').body(),
        ...SETTINGS_INVALID,
        notActive: NOT_ACTIVE_BODY,
      },
    },
    404: "No such key, or another user's (never revealed); or `collection_ids` names a collection that is not the organization's.",
  })
  updateApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', new UuidPathPipe('API key')) keyId: string,
    @Body() body: UpdateApiKeyDto,
    @Audit() audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    const fields: Partial<KeyChangeableFields> = {
      ...settingsOf(body),
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.expires_at === undefined
        ? {}
        : { expiresAt: body.expires_at === null ? null : parseZonedTimestamp(body.expires_at) }),
    };
    return this.apiKeys.update(caller, keyId, fields, audit);
  }

  @Post(':keyId/rotate')
  @NoStore()
  @WithheldInReplay('key', KEY_WITHHELD_NOTICE)
  @ApiOperation({
    summary: 'Rotate a key: a new key with the same name, expiry, scopes, limits and metadata replaces it',
    description:
      "The body is optional. Without it the old key stops at once; `grace_period_seconds` keeps it working that long (never past its own expiry). The new key joins the old one's lineage: the two share one `monthly_credit_limit` counter (`credits_used_this_period`), in the grace period too, capped by the newest key's limit.\n\n" +
      KEY_REPLAY,
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
    @Param('keyId', new UuidPathPipe('API key')) keyId: string,
    @Body() body: RotateApiKeyDto,
    @Audit() audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.rotate(caller, keyId, body.grace_period_seconds ?? 0, audit);
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
    @Param('keyId', new UuidPathPipe('API key')) keyId: string,
    @Audit() audit: AuditContext,
  ): Promise<ApiKeyRecord> {
    return this.apiKeys.revoke(caller, keyId, audit);
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a key (the same as POST .../revoke/)' })
  @KEY_ID()
  @ApiNoContentResponse({ description: 'Revoked; the record stays in the list, inactive.' })
  @ApiErrors(NO_SUCH_KEY)
  async deleteApiKey(
    @CurrentPrincipal() caller: Principal,
    @Param('keyId', new UuidPathPipe('API key')) keyId: string,
    @Audit() audit: AuditContext,
  ): Promise<void> {
    await this.apiKeys.revoke(caller, keyId, audit);
  }
}
