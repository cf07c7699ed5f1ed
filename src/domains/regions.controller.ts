import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  getSchemaPath,
} from '@nestjs/swagger';
import { AdminOnly, Authenticated } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { CreateRegionDto, UpdateRegionDto } from './dto/domain.dto.js';
import { RegionResponse } from './dto/domain.response.js';
import { ApiSlugParam } from './dto/slug.field.js';
import { pathSlug } from './path-slug.js';
import { RegionsService } from './regions.service.js';
import { CATALOGUE_MAX } from './catalogue.js';
import { ApiController } from '../openapi/api-controller.js';

const REGION_SLUG = () => ApiSlugParam('slug', "The region's slug.");
const SLUG_TAKEN = {
  description: 'A field is missing or invalid, or the slug is taken.',
  examples: ['validation'],
  bodies: { slugTaken: ValidationFailedError.field('slug', 'A region with this slug already exists.').body() },
} as const;

@ApiController('domains')
@Authenticated({ role: 'viewer' })
@Controller('v1/regions')
export class RegionsController {
  constructor(private readonly regions: RegionsService) {}

  @Get()
  @ApiOperation({ summary: 'List the regions, by name' })
  @ApiExtraModels(RegionResponse)
  @ApiOkResponse({ schema: { type: 'array', maxItems: CATALOGUE_MAX, items: { $ref: getSchemaPath(RegionResponse) } } })
  listRegions(): Promise<RegionResponse[]> {
    return this.regions.list();
  }

  @Post()
  @AdminOnly()
  @ApiOperation({ summary: 'Create a region' })
  @ApiCreatedResponse({ type: RegionResponse })
  @ApiErrors({ 400: SLUG_TAKEN })
  createRegion(@Body() body: CreateRegionDto): Promise<RegionResponse> {
    return this.regions.create(body);
  }

  @Patch(':slug')
  @AdminOnly()
  @ApiOperation({ summary: 'Rename a region or change its slug' })
  @REGION_SLUG()
  @ApiOkResponse({ type: RegionResponse })
  @ApiErrors({ 400: SLUG_TAKEN, 404: 'No region has this slug.' })
  updateRegion(@Param('slug') slug: string, @Body() body: UpdateRegionDto): Promise<RegionResponse> {
    return this.regions.update(pathSlug(slug, 'Region'), body);
  }

  @Delete(':slug')
  @AdminOnly()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a region (its domains stay, without a region)' })
  @REGION_SLUG()
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: 'No region has this slug.' })
  async deleteRegion(@Param('slug') slug: string): Promise<void> {
    await this.regions.remove(pathSlug(slug, 'Region'));
  }
}
