import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { OrganizationsService } from './organizations.service.js';

@Module({
  imports: [BillingModule],
  providers: [OrganizationsService],
  exports: [OrganizationsService],
})
export class OrganizationsModule {}
