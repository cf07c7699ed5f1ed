import { Injectable } from '@nestjs/common';
import { NotFoundError, ValidationFailedError } from '../common/errors.js';
import { toIsoMicros } from '../common/timestamps.js';
import type { CreateRegionDto, UpdateRegionDto } from './dto/domain.dto.js';
import type { RegionResponse } from './dto/domain.response.js';
import { isUniqueViolation } from '../database/pg-errors.js';
import { CATALOGUE_MAX } from './catalogue.js';
import type { Region } from './region.entity.js';
import { RegionsRepository } from './regions.repository.js';

export function presentRegion(region: Region): RegionResponse {
  return { id: region.id, name: region.name, slug: region.slug, created_at: toIsoMicros(region.createdAt) };
}

@Injectable()
export class RegionsService {
  constructor(private readonly regions: RegionsRepository) {}

  async list(): Promise<RegionResponse[]> {
    return (await this.regions.list(CATALOGUE_MAX)).map(presentRegion);
  }

  async findBySlug(slug: string): Promise<Region | null> {
    return this.regions.findBySlug(slug);
  }

  async create(dto: CreateRegionDto): Promise<RegionResponse> {
    return presentRegion(await this.saving(() => this.regions.save({ name: dto.name, slug: dto.slug })));
  }

  async update(slug: string, dto: UpdateRegionDto): Promise<RegionResponse> {
    const region = await this.findBySlug(slug);
    if (!region) throw NotFoundError.named('Region', slug);
    if (dto.name === null) throw ValidationFailedError.field('name', 'This field may not be null.');
    if (typeof dto.name === 'string') region.name = dto.name;
    if (dto.slug !== undefined) region.slug = dto.slug;
    return presentRegion(await this.saving(() => this.regions.save(region)));
  }

  /** Domains of a deleted region keep existing, without a region. */
  async remove(slug: string): Promise<void> {
    if (!(await this.regions.deleteBySlug(slug))) throw NotFoundError.named('Region', slug);
  }

  private async saving<T>(save: () => Promise<T>): Promise<T> {
    try {
      return await save();
    } catch (error) {
      if (isUniqueViolation(error))
        throw ValidationFailedError.field('slug', 'A region with this slug already exists.');
      throw error;
    }
  }
}
