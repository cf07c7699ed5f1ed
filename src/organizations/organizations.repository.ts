import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { Organization } from './organization.entity.js';

/** The `organizations` table. */
@Injectable()
export class OrganizationsRepository {
  constructor(@InjectRepository(Organization) private readonly organizations: Repository<Organization>) {}

  /** Inside the registration transaction. */
  insert(
    manager: EntityManager,
    organization: Pick<Organization, 'name' | 'ownerId' | 'allowedDomains'>,
  ): Promise<Organization> {
    return manager.save(manager.create(Organization, organization));
  }

  findById(id: string): Promise<Organization | null> {
    return this.organizations.findOneBy({ id });
  }

  async update(id: string, changes: Partial<Pick<Organization, 'name' | 'allowedDomains'>>): Promise<void> {
    await this.organizations.update({ id }, changes);
  }
}
