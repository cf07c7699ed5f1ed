import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  getSchemaPath,
} from '@nestjs/swagger';
import { AdminOnly, Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiSlugParam } from './dto/slug.field.js';
import { DomainsService, presentDomain } from './domains.service.js';
import { CreateDomainDto, UpdateDomainDto } from './dto/domain.dto.js';
import { DomainResponse } from './dto/domain.response.js';
import { pathSlug } from './path-slug.js';
import { CATALOGUE_MAX } from './catalogue.js';
import { ApiController } from '../openapi/api-controller.js';

const DOMAIN_SLUG = () => ApiSlugParam('slug', "The domain's slug.");
const DOMAIN_REFUSED = {
  description: 'A field is missing or invalid, the slug is taken, or no region has the given slug.',
  examples: ['validation'],
  bodies: {
    slugTaken: ValidationFailedError.field('slug', 'A domain with this slug already exists.').body(),
    unknownRegion: ValidationFailedError.field('region', 'No region has the slug "atlantis".').body(),
  },
} as const;

@ApiController('domains')
@Authenticated({ role: 'viewer' })
@Controller('v1/domains')
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  /** Active domains; an administrator may add `?include_inactive=true`. */
  @Get()
  @ApiOperation({ summary: 'List the active public domains, for any caller' })
  @ApiQuery({
    name: 'include_inactive',
    required: false,
    schema: { type: 'string', enum: ['true', 'false'] },
    description: 'Administrators only: `true` lists inactive domains too. Ignored for anyone else.',
  })
  @ApiExtraModels(DomainResponse)
  @ApiOkResponse({ schema: { type: 'array', maxItems: CATALOGUE_MAX, items: { $ref: getSchemaPath(DomainResponse) } } })
  listDomains(
    @CurrentPrincipal() caller: Principal,
    @Query('include_inactive') includeInactive?: string,
  ): Promise<DomainResponse[]> {
    return this.domains.list({ includeInactive: caller.isAdmin && includeInactive === 'true' });
  }

  /** An inactive domain is a 404, except to administrators. */
  @Get(':slug')
  @ApiOperation({ summary: 'One public domain' })
  @DOMAIN_SLUG()
  @ApiOkResponse({ type: DomainResponse })
  @ApiErrors({ 404: 'No such domain, or it is inactive (administrators see inactive ones).' })
  async getDomain(@CurrentPrincipal() caller: Principal, @Param('slug') slug: string): Promise<DomainResponse> {
    return presentDomain(await this.domains.getVisible(pathSlug(slug, 'Domain'), caller.isAdmin));
  }

  @Post()
  @AdminOnly()
  @ApiOperation({ summary: 'Create a public domain (a knowledge base anyone may query)' })
  @ApiCreatedResponse({ type: DomainResponse })
  @ApiErrors({ 400: DOMAIN_REFUSED })
  createDomain(@Body() body: CreateDomainDto): Promise<DomainResponse> {
    return this.domains.create(body);
  }

  @Patch(':slug')
  @AdminOnly()
  @ApiOperation({ summary: 'Change a domain; `is_active: false` hides it' })
  @DOMAIN_SLUG()
  @ApiOkResponse({ type: DomainResponse })
  @ApiErrors({ 400: DOMAIN_REFUSED, 404: 'No domain has this slug.' })
  updateDomain(@Param('slug') slug: string, @Body() body: UpdateDomainDto): Promise<DomainResponse> {
    return this.domains.update(pathSlug(slug, 'Domain'), body);
  }

  @Delete(':slug')
  @AdminOnly()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a domain with its documents' })
  @DOMAIN_SLUG()
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: 'No domain has this slug.' })
  async deleteDomain(@Param('slug') slug: string): Promise<void> {
    await this.domains.remove(pathSlug(slug, 'Domain'));
  }
}
