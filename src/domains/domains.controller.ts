import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { AdminOnly, CurrentPrincipal } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { type DomainRecord, DomainsService, presentDomain } from './domains.service.js';
import { CreateDomainDto, UpdateDomainDto } from './dto/domain.dto.js';
import { pathSlug } from './regions.controller.js';

@Controller('v1/domains')
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  /** Active domains; an administrator may add `?include_inactive=true`. */
  @Get()
  list(@CurrentPrincipal() caller: Principal, @Query('include_inactive') includeInactive?: string): Promise<DomainRecord[]> {
    return this.domains.list({ includeInactive: caller.isAdmin && includeInactive === 'true' });
  }

  /** An inactive domain is a 404, except to administrators. */
  @Get(':slug')
  async get(@CurrentPrincipal() caller: Principal, @Param('slug') slug: string): Promise<DomainRecord> {
    return presentDomain(await this.domains.getVisible(pathSlug(slug), caller.isAdmin));
  }

  @Post()
  @AdminOnly()
  create(@Body() body: CreateDomainDto): Promise<DomainRecord> {
    return this.domains.create(body);
  }

  @Patch(':slug')
  @AdminOnly()
  update(@Param('slug') slug: string, @Body() body: UpdateDomainDto): Promise<DomainRecord> {
    return this.domains.update(pathSlug(slug), body);
  }

  @Delete(':slug')
  @AdminOnly()
  @HttpCode(204)
  async remove(@Param('slug') slug: string): Promise<void> {
    await this.domains.remove(pathSlug(slug));
  }
}
