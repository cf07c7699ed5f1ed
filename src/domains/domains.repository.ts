import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, type Repository } from 'typeorm';
import { Domain } from './domain.entity.js';

export type DomainChanges = Pick<Domain, 'name' | 'slug' | 'description' | 'isActive' | 'regionId'>;

/** The `domains` table; a domain is read with its region. */
@Injectable()
export class DomainsRepository {
  constructor(@InjectRepository(Domain) private readonly domains: Repository<Domain>) {}

  /** By name, at most `limit`. */
  list(options: { includeInactive: boolean; limit: number }): Promise<Domain[]> {
    return this.domains.find({
      where: options.includeInactive ? {} : { isActive: true },
      relations: { region: true },
      order: { name: 'ASC', slug: 'ASC' },
      take: options.limit,
    });
  }

  findBySlug(slug: string, options: { activeOnly: boolean }): Promise<Domain | null> {
    return this.domains.findOne({
      where: options.activeOnly ? { slug, isActive: true } : { slug },
      relations: { region: true },
    });
  }

  findActiveById(id: string): Promise<Domain | null> {
    return this.domains.findOne({ where: { id, isActive: true } });
  }

  /** Of `slugs`, those that name a domain (active or not). */
  async existingSlugs(slugs: string[]): Promise<Set<string>> {
    const found = await this.domains.find({ select: { slug: true }, where: { slug: In(slugs) } });
    return new Set(found.map((domain) => domain.slug));
  }

  insert(domain: DomainChanges): Promise<Domain> {
    return this.domains.save(this.domains.create(domain));
  }

  async update(id: string, changes: DomainChanges): Promise<void> {
    await this.domains.update({ id }, changes);
  }

  /** Locks the domain until the transaction ends; null when none has this slug. */
  lockBySlug(manager: EntityManager, slug: string): Promise<Domain | null> {
    return manager.findOne(Domain, { where: { slug }, lock: { mode: 'pessimistic_write' } });
  }

  /** Its documents go with it (cascade). */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(Domain, { id });
  }
}
