import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Organization } from './organization.entity.js';

@Injectable()
export class OrganizationsService {
  /** The organization every new account gets, owned by it. Runs inside the registration transaction. */
  async createForOwner(manager: EntityManager, ownerId: string, email: string): Promise<Organization> {
    const name = `${email.split('@')[0]}'s organization`.slice(0, 100);
    return manager.save(manager.create(Organization, { name, ownerId, allowedDomains: null }));
  }
}
