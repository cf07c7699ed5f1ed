import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingModule } from '../billing/billing.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { OrganizationsController } from './organizations.controller.js';
import { MembershipsRepository } from './memberships.repository.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { OrganizationsService } from './organizations.service.js';
import { Organization } from './organization.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([Organization]), BillingModule, DomainsModule],
  controllers: [OrganizationsController],
  providers: [OrganizationsService, OrganizationsRepository, MembershipsRepository],
  exports: [OrganizationsService, OrganizationsRepository, MembershipsRepository],
})
export class OrganizationsModule {}
