import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Region } from './region.entity.js';

/** The `regions` table. */
@Injectable()
export class RegionsRepository {
  constructor(@InjectRepository(Region) private readonly regions: Repository<Region>) {}

  /** By name, at most `limit`. */
  list(limit: number): Promise<Region[]> {
    return this.regions.find({ order: { name: 'ASC', slug: 'ASC' }, take: limit });
  }

  findBySlug(slug: string): Promise<Region | null> {
    return this.regions.findOneBy({ slug });
  }

  /** Inserts a new region or writes an existing one's changes. */
  save(region: Pick<Region, 'name' | 'slug'> & Partial<Region>): Promise<Region> {
    return this.regions.save(this.regions.create(region));
  }

  /** False when no region has this slug. Its domains keep existing, without a region. */
  async deleteBySlug(slug: string): Promise<boolean> {
    const result = await this.regions.delete({ slug });
    return Boolean(result.affected);
  }
}
