import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { QuotaService } from '../billing/quota.service.js';
import { echoed, NotFoundError, ValidationFailedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { DomainsService } from '../domains/domains.service.js';
import type { Organization } from './organization.entity.js';
import { MembershipsRepository } from './memberships.repository.js';
import { OrganizationsRepository } from './organizations.repository.js';

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly memberships: MembershipsRepository,
    private readonly quota: QuotaService,
    private readonly domains: DomainsService,
  ) {}

  /** The organization every new account gets, owned by it, with its subscription. Runs inside registration. */
  async createForOwner(manager: EntityManager, ownerId: string, email: string): Promise<Organization> {
    const name = `${email.split('@')[0]}'s organization`.slice(0, 100);
    const organization = await this.organizations.insert(manager, { name, ownerId, allowedDomains: null });
    await this.memberships.insert(manager, organization.id, ownerId, 'owner');
    await this.quota.open(manager, organization.id);
    return organization;
  }

  async current(caller: Principal): Promise<Organization> {
    const organization = await this.organizations.findById(caller.organizationId);
    if (!organization) throw NotFoundError.named('Organization', caller.organizationId);
    return organization;
  }

  /**
   * Unknown domain slugs are refused, naming them. Who may (admins and the owner) is the route's
   * declared role, checked by the permissions guard.
   */
  async update(caller: Principal, changes: { name?: string; allowedDomains?: string[] | null }): Promise<Organization> {
    const organization = await this.current(caller);
    let allowedDomains = changes.allowedDomains;
    if (allowedDomains) {
      allowedDomains = [...new Set(allowedDomains.map((slug) => slug.trim().toLowerCase()))];
      const unknown = await this.domains.unknownSlugs(allowedDomains);
      if (unknown.length > 0) {
        throw ValidationFailedError.field(
          'allowed_domains',
          `Unknown domain: ${unknown.slice(0, 5).map(echoed).join(', ')}.`,
        );
      }
    }
    const update: Partial<Pick<Organization, 'name' | 'allowedDomains'>> = {};
    if (changes.name !== undefined) update.name = changes.name;
    if (allowedDomains !== undefined) update.allowedDomains = allowedDomains;
    if (Object.keys(update).length > 0) await this.organizations.update(organization.id, update);
    return Object.assign(organization, update);
  }
}
