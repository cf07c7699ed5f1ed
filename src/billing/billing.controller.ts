import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { AdminOnly, CurrentPrincipal } from '../common/auth.decorators.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { toIsoSeconds } from './billing-period.js';
import { SetMonthlyCreditsDto } from './dto/subscription.dto.js';
import { type QuotaView, QuotaService } from './quota.service.js';
import { type UsageRecord, UsageService } from './usage.service.js';

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

@Controller('v1/billings')
export class BillingController {
  constructor(
    private readonly quota: QuotaService,
    private readonly usage: UsageService,
  ) {}

  @Get('subscription')
  async subscription(@CurrentPrincipal() caller: Principal) {
    return presentSubscription(await this.quota.view(caller.organizationId));
  }

  @Get('usage')
  async list(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }): Promise<Page<UsageRecord>> {
    const { count, results } = await this.usage.list(caller.organizationId, page);
    return toPage(page, count, results);
  }

  @Get('usage/daily')
  daily(@CurrentPrincipal() caller: Principal) {
    return this.usage.daily(caller.organizationId);
  }

  @Patch('organizations/:organizationId/subscription')
  @AdminOnly()
  async setMonthlyCredits(@Param('organizationId', UuidPathPipe) organizationId: string, @Body() body: SetMonthlyCreditsDto) {
    return presentSubscription(await this.quota.setMonthlyCredits(organizationId, body.monthly_credits));
  }
}
