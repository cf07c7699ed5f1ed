import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseInterceptors } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
} from '@nestjs/swagger';
import { CollectionsService } from '../collections/collections.service.js';
import { ValidationFailedError } from '../common/errors.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ApiPagination } from '../openapi/page.response.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { REQUIRED, UuidPathPipe } from '../common/validation.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiJsonOrMultipartBody } from '../openapi/api-body.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { presentDocument, presentDocumentBatch } from './document.presenter.js';
import { DocumentInputReader, type NewDocument, UnreadableDocumentError } from './document-input.js';
import { DocumentsService } from './documents.service.js';
import { CreatePrivateDocumentDto } from './dto/document.dto.js';
import { CreateDocumentBatchDto } from './dto/document-batch.dto.js';
import {
  DocumentBatchResponse,
  DocumentPage,
  DocumentResponse,
  PrivateDocumentUploadForm,
  DocumentWithContentResponse,
  UPLOAD_BODY_DESCRIPTION,
  UPLOAD_ERRORS,
} from './dto/document.response.js';
import type { UploadedFile as Upload } from './extraction/extract-upload.js';
import { DocumentUploadInterceptor, UploadedDocument } from './upload.interceptor.js';
import { ApiController } from '../openapi/api-controller.js';

/** The caller's organization's private knowledge base; JWT or API key. */
@ApiController('documents')
@Authenticated({ scope: 'documents:read', role: 'viewer' })
@Controller('v1/documents')
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly input: DocumentInputReader,
    private readonly collections: CollectionsService,
  ) {}

  /** The documents this caller may reach: the organization's, or only those of a limited key's collections. */
  private reach(caller: Principal) {
    return { organizationId: caller.organizationId, collectionIds: caller.collectionIds ?? null };
  }

  /** JSON `{title, content, metadata?}` or a multipart upload with `file`. The body is validated by the reader. */
  @Post()
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @UseInterceptors(DocumentUploadInterceptor)
  @ApiOperation({ summary: "Add a document to your organization's private knowledge base (JSON or file upload)" })
  @ApiJsonOrMultipartBody(
    CreatePrivateDocumentDto,
    PrivateDocumentUploadForm,
    `${UPLOAD_BODY_DESCRIPTION} Either form may name the \`collection_id\` to store into.`,
  )
  @ApiCreatedResponse({ type: DocumentResponse, description: 'Stored and searchable; without its text.' })
  @ApiErrors({
    ...UPLOAD_ERRORS,
    404: '`collection_id` names no collection of the organization, or one this API key may not reach.',
  })
  async createDocument(
    @CurrentPrincipal() caller: Principal,
    @Body() body: Record<string, unknown>,
    @UploadedDocument() file?: Upload,
  ): Promise<DocumentResponse> {
    let read: { input: NewDocument; collectionId: string | null };
    try {
      read = await this.input.readPrivate(body, file);
    } catch (error) {
      if (error instanceof UnreadableDocumentError) await this.documents.reportUnreadable(caller.organizationId, error);
      throw error;
    }
    const collection = await this.collections.toWrite(caller, read.collectionId);
    const document = await this.documents.create(
      { organizationId: caller.organizationId, collectionId: collection },
      read.input,
    );
    return presentDocument(document);
  }

  /** The list is checked by the pipe, each document by the reader, before anything is stored. */
  @Post('batch')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @ApiOperation({
    summary: 'Add up to 100 documents at once, all or none',
    description:
      'Stores the documents in one transaction, in the order given: one invalid document is a 400 naming it ' +
      '(`documents[3].content: This field is required.`) and none is stored.',
  })
  @ApiBody({ type: CreateDocumentBatchDto })
  @ApiCreatedResponse({ type: DocumentBatchResponse, description: 'Stored and searchable, in the order given.' })
  @ApiErrors({
    400: {
      description: '`documents` is not a list of 1 to 100, or a document is invalid (named by its index).',
      bodies: {
        badDocument: new ValidationFailedError({ 'documents[3].content': [REQUIRED] }).body(),
        empty: ValidationFailedError.field('documents', 'This list may not be empty.').body(),
      },
    },
    404: '`collection_id` names no collection of the organization, or one this API key may not reach.',
    413: { description: 'The JSON body is over MAX_BODY_BYTES.', examples: ['payloadTooLarge'] },
  })
  async createDocumentBatch(
    @CurrentPrincipal() caller: Principal,
    @Body() body: CreateDocumentBatchDto,
  ): Promise<DocumentBatchResponse> {
    const inputs = await this.input.readBatch(body.documents);
    const collection = await this.collections.toWrite(caller, body.collection_id);
    const documents = await this.documents.createMany(
      { organizationId: caller.organizationId, collectionId: collection },
      inputs,
    );
    return presentDocumentBatch(documents);
  }

  @Get()
  @ApiOperation({
    summary: "List your organization's documents of one collection, newest first",
    description:
      'Without `collection_id`: the `default` collection, or for an API key limited to collections, all of its own.',
  })
  @ApiPagination()
  @ApiQuery({
    name: 'collection_id',
    required: false,
    schema: { type: 'string', maxLength: 100, example: '3f6c1d2e-8a4b-4c6d-9e0f-1a2b3c4d5e6f' },
    description: 'The collection to list (`default` stands for the default collection).',
  })
  @ApiOkResponse({ type: DocumentPage })
  @ApiErrors({ 404: "No such collection, another organization's, or one this API key may not reach." })
  async listDocuments(
    @CurrentPrincipal() caller: Principal,
    @Pagination() page: PageRequest & { url: URL },
    @Query('collection_id') collectionId?: unknown,
  ): Promise<Page<DocumentResponse>> {
    const requested = typeof collectionId === 'string' && collectionId !== '' ? collectionId : null;
    if (collectionId !== undefined && typeof collectionId !== 'string')
      throw ValidationFailedError.field('collection_id', 'Give one collection id.');
    const collectionIds = await this.collections.toList(caller, requested);
    const { count, documents } = await this.documents.list(
      { organizationId: caller.organizationId, collectionIds },
      page,
    );
    return toPage(
      page,
      count,
      documents.map((document) => presentDocument(document)),
    );
  }

  @Get(':id')
  @ApiOperation({ summary: 'One of your documents, with its text' })
  @ApiUuidParam('id', 'The document id.')
  @ApiOkResponse({ type: DocumentWithContentResponse })
  @ApiErrors({ 404: "No such document, or another organization's." })
  async getDocument(
    @CurrentPrincipal() caller: Principal,
    @Param('id', new UuidPathPipe('Document')) id: string,
  ): Promise<DocumentResponse> {
    return presentDocument(await this.documents.get(this.reach(caller), id), true);
  }

  @Delete(':id')
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one of your documents (and its passages)' })
  @ApiUuidParam('id', 'The document id.')
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: "No such document, or another organization's." })
  async deleteDocument(
    @CurrentPrincipal() caller: Principal,
    @Param('id', new UuidPathPipe('Document')) id: string,
  ): Promise<void> {
    await this.documents.remove(this.reach(caller), id);
  }
}
