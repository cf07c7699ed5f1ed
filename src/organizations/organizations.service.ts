import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { QuotaService } from '../billing/quota.service.js';
import { Organization } from './organization.entity.js';

@Injectable()
export class OrganizationsService {
  constructor(private readonly quota: QuotaService) {}

  /** The organization every new account gets, owned by it. Runs inside the registration transaction. */
  async createForOwner(manager: EntityManager, ownerId: string, email: string): Promise<Organization> {
    const name = `${email.split('@')[0]}'s organization`.slice(0, 100);
    const organization = await manager.save(manager.create(Organization, { name, ownerId, allowedDomains: null }));
    await this.quota.open(manager, organization.id);
    return organization;
  }
}
