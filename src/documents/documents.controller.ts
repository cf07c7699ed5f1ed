import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
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
import { CreateDocumentDto } from './dto/document.dto.js';
import { CreateDocumentBatchDto } from './dto/document-batch.dto.js';
import {
  DocumentBatchResponse,
  DocumentPage,
  DocumentResponse,
  DocumentUploadForm,
  DocumentWithContentResponse,
  UPLOAD_BODY_DESCRIPTION,
  UPLOAD_ERRORS,
} from './dto/document.response.js';
import type { UploadedFile as Upload } from './extraction/extract-upload.js';
import { DocumentUploadInterceptor, UploadedDocument } from './upload.interceptor.js';

/** The caller's organization's private knowledge base; JWT or API key. */
@ApiTags('documents')
@Authenticated({ scope: 'documents:read', role: 'viewer' })
@Controller('v1/documents')
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly input: DocumentInputReader,
  ) {}

  /** JSON `{title, content, metadata?}` or a multipart upload with `file`. The body is validated by the reader. */
  @Post()
  @Authenticated({ scope: 'documents:write', role: 'member' })
  @UseInterceptors(DocumentUploadInterceptor)
  @ApiOperation({ summary: "Add a document to your organization's private knowledge base (JSON or file upload)" })
  @ApiJsonOrMultipartBody(CreateDocumentDto, DocumentUploadForm, UPLOAD_BODY_DESCRIPTION)
  @ApiCreatedResponse({ type: DocumentResponse, description: 'Stored and searchable; without its text.' })
  @ApiErrors(UPLOAD_ERRORS)
  async createDocument(
    @CurrentPrincipal() caller: Principal,
    @Body() body: Record<string, unknown>,
    @UploadedDocument() file?: Upload,
  ): Promise<DocumentResponse> {
    const owner = { organizationId: caller.organizationId };
    let input: NewDocument;
    try {
      input = await this.input.read(body, file);
    } catch (error) {
      if (error instanceof UnreadableDocumentError) await this.documents.reportUnreadable(owner, error);
      throw error;
    }
    return presentDocument(await this.documents.create(owner, input));
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
    413: { description: 'The JSON body is over MAX_BODY_BYTES.', examples: ['payloadTooLarge'] },
  })
  async createDocumentBatch(
    @CurrentPrincipal() caller: Principal,
    @Body() body: CreateDocumentBatchDto,
  ): Promise<DocumentBatchResponse> {
    const documents = await this.documents.createMany(
      { organizationId: caller.organizationId },
      await this.input.readBatch(body.documents),
    );
    return presentDocumentBatch(documents);
  }

  @Get()
  @ApiOperation({ summary: "List your organization's documents, newest first" })
  @ApiPagination()
  @ApiOkResponse({ type: DocumentPage })
  async listDocuments(
    @CurrentPrincipal() caller: Principal,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<DocumentResponse>> {
    const { count, documents } = await this.documents.list({ organizationId: caller.organizationId }, page);
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
    return presentDocument(await this.documents.get({ organizationId: caller.organizationId }, id), true);
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
    await this.documents.remove({ organizationId: caller.organizationId }, id);
  }
}
