import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { AdminOnly } from '../common/auth.decorators.js';
import { NotFoundError } from '../common/errors.js';
import { CreateRegionDto, UpdateRegionDto } from './dto/domain.dto.js';
import { SLUG_PATTERN } from './dto/slug.field.js';
import { type RegionRecord, RegionsService } from './regions.service.js';

/** A path slug that cannot exist names nothing. */
export function pathSlug(slug: string): string {
  if (!SLUG_PATTERN.test(slug)) throw new NotFoundError();
  return slug;
}

@Controller('v1/regions')
export class RegionsController {
  constructor(private readonly regions: RegionsService) {}

  @Get()
  list(): Promise<RegionRecord[]> {
    return this.regions.list();
  }

  @Post()
  @AdminOnly()
  create(@Body() body: CreateRegionDto): Promise<RegionRecord> {
    return this.regions.create(body);
  }

  @Patch(':slug')
  @AdminOnly()
  update(@Param('slug') slug: string, @Body() body: UpdateRegionDto): Promise<RegionRecord> {
    return this.regions.update(pathSlug(slug), body);
  }

  @Delete(':slug')
  @AdminOnly()
  @HttpCode(204)
  async remove(@Param('slug') slug: string): Promise<void> {
    await this.regions.remove(pathSlug(slug));
  }
}
