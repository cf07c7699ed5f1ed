import { Body, Controller, Get, Patch } from '@nestjs/common';
import { CurrentPrincipal } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { toIsoMicros } from '../common/timestamps.js';
import { UpdateOrganizationDto } from './dto/organization.dto.js';
import type { Organization } from './organization.entity.js';
import { OrganizationsService } from './organizations.service.js';

function presentOrganization(organization: Organization) {
  return {
    id: organization.id,
    name: organization.name,
    allowed_domains: organization.allowedDomains,
    created_at: toIsoMicros(organization.createdAt),
  };
}

@Controller('v1/organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get('current')
  async current(@CurrentPrincipal() caller: Principal) {
    return presentOrganization(await this.organizations.current(caller));
  }

  @Patch('current')
  async update(@CurrentPrincipal() caller: Principal, @Body() body: UpdateOrganizationDto) {
    return presentOrganization(
      await this.organizations.update(caller, { name: body.name, allowedDomains: body.allowed_domains }),
    );
  }
}
