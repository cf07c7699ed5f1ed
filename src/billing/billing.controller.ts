import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import { AdminOnly, Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ApiPagination } from '../openapi/page.response.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { toIsoSeconds } from './billing-period.js';
import {
  DailyUsageResponse,
  KeyUsageResponse,
  SubscriptionResponse,
  UsagePage,
  type UsageRecordResponse,
} from './dto/billing.response.js';
import { SetMonthlyCreditsDto } from './dto/subscription.dto.js';
import { type QuotaView, QuotaService } from './quota.service.js';
import { ApiUsageFilter, type UsageFilter, UsageFilterQuery } from './usage-filter.js';
import { USAGE_KEYS_MAX, UsageService } from './usage.service.js';
import { ApiController } from '../openapi/api-controller.js';

function presentSubscription(quota: QuotaView) {
  return {
    plan: quota.plan,
    current_quota: {
      credits_total: quota.creditsTotal,
      credits_used: quota.creditsUsed,
      credits_remaining: quota.creditsRemaining,
      period_start: toIsoSeconds(quota.periodStart),
      period_end: toIsoSeconds(quota.periodEnd),
    },
  };
}

@ApiController('billing')
@Authenticated({ scope: 'usage:read', role: 'viewer' })
@Controller('v1/billings')
export class BillingController {
  constructor(
    private readonly quota: QuotaService,
    private readonly usage: UsageService,
  ) {}

  @Get('subscription')
  @ApiOperation({ summary: "Your organization's plan and the current period's credit quota" })
  @ApiOkResponse({ type: SubscriptionResponse })
  @ApiErrors({ 404: 'The organization has no subscription (it no longer exists).' })
  async getSubscription(@CurrentPrincipal() caller: Principal) {
    return presentSubscription(await this.quota.view(caller.organizationId));
  }

  @Get('usage')
  @ApiOperation({ summary: 'What your organization spent: when, by which user or API key, on what; newest first' })
  // Above the pagination: its 400 names every parameter of the route.
  @ApiUsageFilter()
  @ApiPagination()
  @ApiOkResponse({ type: UsagePage })
  async listUsage(
    @CurrentPrincipal() caller: Principal,
    @UsageFilterQuery() filter: UsageFilter,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<UsageRecordResponse>> {
    const { count, results } = await this.usage.list(caller.organizationId, filter, page);
    return toPage(page, count, results);
  }

  @Get('usage/keys')
  @ApiOperation({
    summary: 'Requests and credits per API key in the current period, and one row (`key_id: null`) for JWT use',
    description:
      "Keys that can still be used are listed even with zeros; revoked, expired and rotated-away keys only when they spent this period. The JWT row is always there. Most credits first; at most the 1,000 keys that spent the most. The rows add up to the period's `credits_used`.",
  })
  @ApiExtraModels(KeyUsageResponse)
  @ApiOkResponse({
    schema: {
      type: 'array',
      maxItems: USAGE_KEYS_MAX + 1,
      items: { $ref: getSchemaPath(KeyUsageResponse) },
      example: [
        {
          key_id: '3f1e7c2a-9b4d-4c1e-8f2a-5d6b7c8e9f01',
          key_prefix: 'svc_7GkQ2mZp',
          name: 'ci server',
          requests: 40,
          credits: 40,
        },
        { key_id: null, key_prefix: null, name: null, requests: 2, credits: 2 },
        {
          key_id: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
          key_prefix: 'svc_Q2mZp7Gk',
          name: 'staging',
          requests: 0,
          credits: 0,
        },
      ],
    },
  })
  getUsageByKey(@CurrentPrincipal() caller: Principal) {
    return this.usage.byKey(caller.organizationId);
  }

  @Get('usage/daily')
  @ApiOperation({ summary: 'Credits spent per UTC day of the current period (every day so far, zeros included)' })
  // One entry per day of the current calendar month so far.
  @ApiOkResponse({ schema: { type: 'array', maxItems: 31, items: { $ref: getSchemaPath(DailyUsageResponse) } } })
  @ApiExtraModels(DailyUsageResponse)
  getDailyUsage(@CurrentPrincipal() caller: Principal) {
    return this.usage.daily(caller.organizationId);
  }

  @Patch('organizations/:organizationId/subscription')
  @AdminOnly()
  @ApiOperation({ summary: "Set an organization's monthly credits" })
  @ApiUuidParam('organizationId', 'The organization.')
  @ApiOkResponse({ type: SubscriptionResponse, description: "The organization's subscription with its new quota." })
  @ApiErrors({ 404: 'No such organization.' })
  async setMonthlyCredits(
    @Param('organizationId', new UuidPathPipe('Organization')) organizationId: string,
    @Body() body: SetMonthlyCreditsDto,
  ) {
    return presentSubscription(await this.quota.setMonthlyCredits(organizationId, body.monthly_credits));
  }
}
