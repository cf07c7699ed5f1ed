import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { OrganizationsController } from './organizations.controller.js';
import { OrganizationsService } from './organizations.service.js';

@Module({
  imports: [BillingModule, DomainsModule],
  controllers: [OrganizationsController],
  providers: [OrganizationsService],
  exports: [OrganizationsService],
})
export class OrganizationsModule {}
