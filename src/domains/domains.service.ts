import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { echoed, NotFoundError, ValidationFailedError } from '../common/errors.js';
import { toIsoMicros } from '../common/timestamps.js';
import { SearchIndexRepository } from '../retrieval/search-index.repository.js';
import type { Domain } from './domain.entity.js';
import { DomainsRepository } from './domains.repository.js';
import type { CreateDomainDto, UpdateDomainDto } from './dto/domain.dto.js';
import type { DomainResponse } from './dto/domain.response.js';
import type { Region } from './region.entity.js';
import { RegionsRepository } from './regions.repository.js';
import { isForeignKeyViolation, isUniqueViolation } from '../database/pg-errors.js';
import { CATALOGUE_MAX } from './catalogue.js';

export function presentDomain(domain: Domain): DomainResponse {
  return {
    id: domain.id,
    name: domain.name,
    slug: domain.slug,
    description: domain.description,
    region: domain.region?.slug ?? null,
    is_active: domain.isActive,
    created_at: toIsoMicros(domain.createdAt),
  };
}

/** Public domains. Other features look domains up here (`findActiveBySlug`, `unknownSlugs`). */
@Injectable()
export class DomainsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly domains: DomainsRepository,
    private readonly regions: RegionsRepository,
    private readonly indexer: SearchIndexRepository,
  ) {}

  async list(options: { includeInactive: boolean }): Promise<DomainResponse[]> {
    const domains = await this.domains.list({ includeInactive: options.includeInactive, limit: CATALOGUE_MAX });
    return domains.map(presentDomain);
  }

  /** An active domain by slug; null when there is none or it is inactive (callers answer 404). */
  async findActiveBySlug(slug: string): Promise<Domain | null> {
    return this.domains.findBySlug(slug, { activeOnly: true });
  }

  /** An active domain by id (a document's owner); null when there is none or it is inactive. */
  async findActiveById(id: string): Promise<Domain | null> {
    return this.domains.findActiveById(id);
  }

  /** Any domain by slug, active or not (administrators manage inactive ones). */
  async findBySlug(slug: string): Promise<Domain | null> {
    return this.domains.findBySlug(slug, { activeOnly: false });
  }

  /** A domain the caller may see: admins see inactive ones too; 404 otherwise. */
  async getVisible(slug: string, isAdmin: boolean): Promise<Domain> {
    const domain = isAdmin ? await this.findBySlug(slug) : await this.findActiveBySlug(slug);
    if (!domain) throw NotFoundError.named('Domain', slug);
    return domain;
  }

  /** Of `slugs`, those that name no domain (active or not), in the order given, without repeats. */
  async unknownSlugs(slugs: string[]): Promise<string[]> {
    const wanted = [...new Set(slugs.filter((slug) => typeof slug === 'string'))];
    if (wanted.length === 0) return [];
    const found = await this.domains.existingSlugs(wanted);
    return wanted.filter((slug) => !found.has(slug));
  }

  async create(dto: CreateDomainDto): Promise<DomainResponse> {
    const region = await this.regionFor(dto.region);
    const saved = await this.saving(() =>
      this.domains.insert({
        name: dto.name,
        slug: dto.slug,
        description: dto.description ?? '',
        regionId: region?.id ?? null,
        isActive: true,
      }),
    );
    return presentDomain(Object.assign(saved, { region }));
  }

  async update(slug: string, dto: UpdateDomainDto): Promise<DomainResponse> {
    const domain = await this.findBySlug(slug);
    if (!domain) throw NotFoundError.named('Domain', slug);
    for (const field of ['name', 'slug', 'is_active'] as const) {
      if (dto[field] === null) throw ValidationFailedError.field(field, 'This field may not be null.');
    }
    if (typeof dto.name === 'string') domain.name = dto.name;
    if (dto.slug !== undefined) domain.slug = dto.slug;
    if (dto.description !== undefined) domain.description = dto.description ?? '';
    if (typeof dto.is_active === 'boolean') domain.isActive = dto.is_active;
    if (dto.region !== undefined) {
      domain.region = await this.regionFor(dto.region);
      domain.regionId = domain.region?.id ?? null;
    }
    const { name, description, isActive, regionId } = domain;
    await this.saving(() =>
      this.domains.update(domain.id, { name, slug: domain.slug, description, isActive, regionId }),
    );
    return presentDomain(domain);
  }

  /** Deletes the domain with its documents, chunks and statistics. */
  async remove(slug: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const domain = await this.domains.lockBySlug(manager, slug);
      if (!domain) throw NotFoundError.named('Domain', slug);
      await this.indexer.dropCorpus(manager, domain.id);
      await this.domains.delete(manager, domain.id);
    });
  }

  private async regionFor(slug: string | null | undefined): Promise<Region | null> {
    if (slug === undefined || slug === null) return null;
    const region = await this.regions.findBySlug(slug);
    if (!region) throw ValidationFailedError.field('region', `No region has the slug "${echoed(slug)}".`);
    return region;
  }

  private async saving<T>(save: () => Promise<T>): Promise<T> {
    try {
      return await save();
    } catch (error) {
      if (isUniqueViolation(error))
        throw ValidationFailedError.field('slug', 'A domain with this slug already exists.');
      // The region was deleted meanwhile.
      if (isForeignKeyViolation(error)) throw ValidationFailedError.field('region', 'The region no longer exists.');
      throw error;
    }
  }
}
