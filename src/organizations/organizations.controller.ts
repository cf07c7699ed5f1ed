import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { toIsoMicros } from '../common/timestamps.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { UpdateOrganizationDto } from './dto/organization.dto.js';
import { OrganizationResponse } from './dto/organization.response.js';
import type { Organization } from './organization.entity.js';
import { OrganizationsService } from './organizations.service.js';
import { ApiController } from '../openapi/api-controller.js';

function presentOrganization(organization: Organization) {
  return {
    id: organization.id,
    name: organization.name,
    allowed_domains: organization.allowedDomains,
    created_at: toIsoMicros(organization.createdAt),
  };
}

@ApiController('organizations')
@Authenticated({ role: 'viewer' })
@Controller('v1/organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get('current')
  @ApiOperation({ summary: "The caller's organization" })
  @ApiOkResponse({ type: OrganizationResponse })
  @ApiErrors({ 404: 'The organization no longer exists.' })
  async getCurrentOrganization(@CurrentPrincipal() caller: Principal) {
    return presentOrganization(await this.organizations.current(caller));
  }

  @Patch('current')
  @Authenticated({ scope: 'organization:write', role: 'admin' })
  @ApiOperation({ summary: 'Rename the organization or restrict the domains it may query (admins and the owner)' })
  @ApiOkResponse({ type: OrganizationResponse, description: 'The updated organization.' })
  @ApiErrors({
    400: {
      description: 'A bad field, or `allowed_domains` names a domain that does not exist.',
      bodies: { unknownDomain: ValidationFailedError.field('allowed_domains', 'Unknown domain: astrology.').body() },
    },
    403: {
      description:
        'The caller is neither an admin nor the owner of the organization, or the API key lacks the scope `organization:write`.',
      examples: ['permissionDenied', 'missingScope'],
    },
    404: 'The organization no longer exists.',
  })
  async updateCurrentOrganization(@CurrentPrincipal() caller: Principal, @Body() body: UpdateOrganizationDto) {
    return presentOrganization(
      await this.organizations.update(caller, { name: body.name, allowedDomains: body.allowed_domains }),
    );
  }
}
