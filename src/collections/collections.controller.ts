import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { BadRequestError, ConflictError } from '../common/errors.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiPagination } from '../openapi/page.response.js';
import { ApiParam } from '@nestjs/swagger';
import { presentCollection } from './collection.presenter.js';
import {
  COLLECTIONS_MAX,
  CollectionsService,
  DEFAULT_NOT_DELETABLE,
  DEFAULT_NOT_RENAMABLE,
  duplicateName,
  tooManyCollections,
} from './collections.service.js';
import { CreateCollectionDto, UpdateCollectionDto } from './dto/collection.dto.js';
import { CollectionPage, CollectionResponse } from './dto/collection.response.js';
import { ApiController } from '../openapi/api-controller.js';

const COLLECTION_ID = () =>
  ApiParam({
    name: 'id',
    schema: { type: 'string', maxLength: 100, example: '3f6c1d2e-8a4b-4c6d-9e0f-1a2b3c4d5e6f' },
    description: 'The collection id (`default` stands for the default collection).',
  });
const NO_SUCH_COLLECTION = "No such collection, another organization's, or one this API key may not reach.";
const DUPLICATE = {
  description: 'Another collection of the organization has this name.',
  bodies: { duplicate: new ConflictError(duplicateName('Support tickets')).body() },
};

/** The organization's collections: several private knowledge bases, each searched as its own corpus. */
@ApiController('collections')
@Authenticated({ scope: 'documents:read', role: 'viewer' })
@Controller('v1/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({
    summary: 'Create a collection',
    description: `At most ${COLLECTIONS_MAX} per organization, \`default\` included. An API key limited to collections cannot create one (403).`,
  })
  @ApiCreatedResponse({ type: CollectionResponse })
  @ApiErrors({
    400: {
      description: `A bad field, or the organization already has ${COLLECTIONS_MAX} collections.`,
      bodies: { tooMany: new BadRequestError(tooManyCollections(COLLECTIONS_MAX)).body() },
    },
    403: {
      description: 'The API key lacks the scope `documents:write`, or is limited to collections.',
      examples: ['missingScope', 'permissionDenied'],
    },
    409: DUPLICATE,
  })
  async createCollection(
    @CurrentPrincipal() caller: Principal,
    @Body() body: CreateCollectionDto,
  ): Promise<CollectionResponse> {
    return presentCollection(
      await this.collections.create(caller, {
        name: body.name,
        description: body.description,
        metadata: body.metadata,
      }),
    );
  }

  @Get()
  @ApiOperation({
    summary: "List your organization's collections, oldest first (`default` first)",
    description: 'An API key limited to collections sees only its own.',
  })
  @ApiPagination()
  @ApiOkResponse({ type: CollectionPage })
  async listCollections(
    @CurrentPrincipal() caller: Principal,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<CollectionResponse>> {
    const { count, collections } = await this.collections.list(caller, page);
    return toPage(page, count, collections.map(presentCollection));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One collection, with its document and chunk counts' })
  @COLLECTION_ID()
  @ApiOkResponse({ type: CollectionResponse })
  @ApiErrors({ 404: NO_SUCH_COLLECTION })
  async getCollection(@CurrentPrincipal() caller: Principal, @Param('id') id: string): Promise<CollectionResponse> {
    return presentCollection(await this.collections.get(caller, id));
  }

  @Patch(':id')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({ summary: "Change a collection's name, description or metadata" })
  @COLLECTION_ID()
  @ApiOkResponse({ type: CollectionResponse, description: 'The updated collection.' })
  @ApiErrors({
    404: NO_SUCH_COLLECTION,
    409: {
      description: 'Another collection has this name, or the default collection would be renamed.',
      bodies: {
        duplicate: new ConflictError(duplicateName('Support tickets')).body(),
        defaultRenamed: new ConflictError(DEFAULT_NOT_RENAMABLE).body(),
      },
    },
  })
  async updateCollection(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Body() body: UpdateCollectionDto,
  ): Promise<CollectionResponse> {
    return presentCollection(
      await this.collections.update(caller, id, {
        name: body.name,
        description: body.description,
        metadata: body.metadata,
      }),
    );
  }

  @Delete(':id')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a collection and all its documents' })
  @COLLECTION_ID()
  @ApiNoContentResponse({
    description:
      'Deleted: out of every read at once; its documents and their passages are deleted right after, in batches of 500 a transaction.',
  })
  @ApiErrors({
    404: NO_SUCH_COLLECTION,
    409: {
      description: 'The default collection cannot be deleted.',
      bodies: { isDefault: new ConflictError(DEFAULT_NOT_DELETABLE).body() },
    },
  })
  async deleteCollection(@CurrentPrincipal() caller: Principal, @Param('id') id: string): Promise<void> {
    await this.collections.remove(caller, id);
  }
}
