import { SECRET_WITHHELD_NOTICE, WithheldInReplay } from '../idempotency/withheld-in-replay.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  getSchemaPath,
} from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { BadRequestError, ValidationFailedError } from '../common/errors.js';
import { NoStore } from '../common/no-store.decorator.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { ApiPagination } from '../openapi/page.response.js';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook.dto.js';
import {
  CreatedWebhookResponse,
  QueuedDeliveryResponse,
  WebhookDeliveryPage,
  type WebhookDeliveryResponse,
  WebhookResponse,
  WebhookSecretResponse,
} from './dto/webhook.response.js';
import { presentDelivery, presentWebhook } from './webhook.presenter.js';
import { URL_ADDRESS } from './webhook-url.js';
import { tooManyEndpoints, WebhooksService } from './webhooks.service.js';
import { ApiController } from '../openapi/api-controller.js';

const WEBHOOK_ID = () => ApiUuidParam('webhookId', 'The id of one of your organization’s webhook endpoints.');
const NO_SUCH_WEBHOOK = { 404: "No such endpoint, or another organization's (never revealed)." } as const;
const NOT_OWNER = {
  403: {
    description: "The caller is not the organization's owner or admin, or the API key lacks `organization:write`.",
    examples: ['permissionDenied', 'missingScope'],
  },
} as const;
const BAD_FIELDS = {
  url: ValidationFailedError.field('url', URL_ADDRESS).body(),
  events: ValidationFailedError.field(
    'events',
    '"document.created" is not an event type; event types: document.indexed, document.failed, document.deleted, api_key.created, api_key.revoked, api_key.rotated, api_key.expiring, usage.threshold, member.joined, member.removed.',
  ).body(),
};

/**
 * Webhook endpoints (CONTRACT, third edition): the organization's owner and its admins,
 * by JWT or by one of its API keys with the scope `organization:write`.
 */
@ApiController('webhooks')
@Controller('v1/webhooks')
@Authenticated({ scope: 'organization:write', role: 'admin' })
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @NoStore()
  @WithheldInReplay('secret', SECRET_WITHHELD_NOTICE)
  @ApiOperation({
    summary: 'Register an endpoint; its signing secret is returned this once',
    description:
      'Deliveries follow Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). At most 20 endpoints per organization.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookResponse, description: 'The endpoint, with `secret` (once).' })
  @ApiErrors({
    400: {
      description: 'A refused `url`, an unknown event type, or the organization already has 20 endpoints.',
      bodies: { ...BAD_FIELDS, tooMany: new BadRequestError(tooManyEndpoints(20)).body() },
    },
    ...NOT_OWNER,
  })
  async createWebhook(@CurrentPrincipal() caller: Principal, @Body() body: CreateWebhookDto) {
    const { endpoint, secret } = await this.webhooks.create(caller, body);
    return { ...presentWebhook(endpoint), secret };
  }

  @Get()
  @ApiOperation({ summary: "The organization's webhook endpoints, newest first (never their secrets)" })
  @ApiExtraModels(WebhookResponse)
  @ApiOkResponse({ schema: { type: 'array', maxItems: 1000, items: { $ref: getSchemaPath(WebhookResponse) } } })
  @ApiErrors(NOT_OWNER)
  async listWebhooks(@CurrentPrincipal() caller: Principal): Promise<WebhookResponse[]> {
    return (await this.webhooks.list(caller)).map(presentWebhook);
  }

  @Get(':webhookId')
  @ApiOperation({ summary: 'One endpoint' })
  @WEBHOOK_ID()
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors({ ...NOT_OWNER, ...NO_SUCH_WEBHOOK })
  async getWebhook(@CurrentPrincipal() caller: Principal, @Param('webhookId', UuidPathPipe) id: string) {
    return presentWebhook(await this.webhooks.get(caller, id));
  }

  @Patch(':webhookId')
  @ApiOperation({
    summary: "Change an endpoint's url, events, description, or enable or disable it",
    description: 'Only the fields given change. A new `url` is checked as on creation.',
  })
  @WEBHOOK_ID()
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors({
    400: { description: 'A refused `url` or an unknown event type.', bodies: BAD_FIELDS },
    ...NOT_OWNER,
    ...NO_SUCH_WEBHOOK,
  })
  async updateWebhook(
    @CurrentPrincipal() caller: Principal,
    @Param('webhookId', UuidPathPipe) id: string,
    @Body() body: UpdateWebhookDto,
  ) {
    return presentWebhook(await this.webhooks.update(caller, id, body));
  }

  @Delete(':webhookId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an endpoint and its deliveries' })
  @WEBHOOK_ID()
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ ...NOT_OWNER, ...NO_SUCH_WEBHOOK })
  async deleteWebhook(@CurrentPrincipal() caller: Principal, @Param('webhookId', UuidPathPipe) id: string) {
    await this.webhooks.remove(caller, id);
  }

  @Post(':webhookId/rotate-secret')
  @HttpCode(200)
  @NoStore()
  @WithheldInReplay('secret', SECRET_WITHHELD_NOTICE)
  @ApiOperation({
    summary: "Replace an endpoint's signing secret",
    description: 'For 24 hours deliveries carry two signatures: one with the new secret, one with the old.',
  })
  @WEBHOOK_ID()
  @ApiOkResponse({ type: WebhookSecretResponse })
  @ApiErrors({ ...NOT_OWNER, ...NO_SUCH_WEBHOOK })
  async rotateWebhookSecret(@CurrentPrincipal() caller: Principal, @Param('webhookId', UuidPathPipe) id: string) {
    return { secret: await this.webhooks.rotateSecret(caller, id) };
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a `ping` event to this endpoint', description: 'It appears in its deliveries.' })
  @WEBHOOK_ID()
  @ApiAcceptedResponse({ type: QueuedDeliveryResponse, description: 'Queued: the ping is sent within seconds.' })
  @ApiErrors({ ...NOT_OWNER, ...NO_SUCH_WEBHOOK })
  async testWebhook(
    @CurrentPrincipal() caller: Principal,
    @Param('webhookId', UuidPathPipe) id: string,
  ): Promise<QueuedDeliveryResponse> {
    return { delivery_id: await this.webhooks.test(caller, id) };
  }

  @Get(':webhookId/deliveries')
  @ApiOperation({ summary: "An endpoint's deliveries, newest first" })
  @WEBHOOK_ID()
  @ApiPagination()
  @ApiOkResponse({ type: WebhookDeliveryPage })
  @ApiErrors({ ...NOT_OWNER, ...NO_SUCH_WEBHOOK })
  async listWebhookDeliveries(
    @CurrentPrincipal() caller: Principal,
    @Param('webhookId', UuidPathPipe) id: string,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<WebhookDeliveryResponse>> {
    const { rows, count } = await this.webhooks.deliveries(caller, id, page);
    return toPage(page, count, rows.map(presentDelivery));
  }

  @Post(':webhookId/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a delivery again now',
    description: 'With the same `webhook-id`. A delivery being sent at this moment is left to finish.',
  })
  @WEBHOOK_ID()
  @ApiUuidParam('deliveryId', 'One of the endpoint’s deliveries.')
  @ApiAcceptedResponse({ type: QueuedDeliveryResponse, description: 'Queued: due now.' })
  @ApiErrors({ ...NOT_OWNER, 404: 'No such endpoint or delivery, or another organization’s.' })
  async retryWebhookDelivery(
    @CurrentPrincipal() caller: Principal,
    @Param('webhookId', UuidPathPipe) id: string,
    @Param('deliveryId', UuidPathPipe) deliveryId: string,
  ): Promise<QueuedDeliveryResponse> {
    await this.webhooks.retry(caller, id, deliveryId);
    return { delivery_id: deliveryId };
  }
}
