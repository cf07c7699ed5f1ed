import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminOnly } from '../common/auth.decorators.js';
import { ApiPagination } from '../openapi/page.response.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import { UuidPathPipe } from '../common/validation.js';
import { DomainsService } from '../domains/domains.service.js';
import { ApiSlugParam } from '../domains/dto/slug.field.js';
import { pathSlug } from '../domains/path-slug.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiJsonOrMultipartBody } from '../openapi/api-body.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { presentDocument } from './document.presenter.js';
import { DocumentInputReader } from './document-input.js';
import { DocumentsService } from './documents.service.js';
import { CreateDocumentDto } from './dto/document.dto.js';
import {
  DocumentPage,
  DocumentResponse,
  DocumentUploadForm,
  DocumentWithContentResponse,
  UPLOAD_BODY_DESCRIPTION,
  UPLOAD_ERRORS,
} from './dto/document.response.js';
import type { UploadedFile as Upload } from './extraction/extract-upload.js';
import { DocumentUploadInterceptor, UploadedDocument } from './upload.interceptor.js';
import { ApiController } from '../openapi/api-controller.js';

const NO_SUCH_DOMAIN = 'No domain has this slug (inactive ones included).';
const NO_SUCH_DOCUMENT = 'No domain has this slug, or no such document in it.';
const DOCUMENT_ID = () => ApiUuidParam('id', 'The document id.');

/** A public domain's knowledge base: administrators only, inactive domains included. */
@ApiController('domains')
@ApiSlugParam('slug', "The domain's slug.")
@Controller('v1/domains/:slug/documents')
@AdminOnly()
export class DomainDocumentsController {
  constructor(
    private readonly domains: DomainsService,
    private readonly documents: DocumentsService,
    private readonly input: DocumentInputReader,
  ) {}

  @Post()
  @UseInterceptors(DocumentUploadInterceptor)
  @ApiOperation({ summary: "Add a document to a public domain's knowledge base (JSON or file upload)" })
  @ApiJsonOrMultipartBody(CreateDocumentDto, DocumentUploadForm, UPLOAD_BODY_DESCRIPTION)
  @ApiCreatedResponse({ type: DocumentResponse, description: 'Stored and searchable; without its text.' })
  @ApiErrors({ ...UPLOAD_ERRORS, 404: NO_SUCH_DOMAIN })
  async createDomainDocument(
    @Param('slug') slug: string,
    @Body() body: Record<string, unknown>,
    @UploadedDocument() file?: Upload,
  ): Promise<DocumentResponse> {
    const domain = await this.domains.getVisible(pathSlug(slug, 'Domain'), true);
    const document = await this.documents.create({ domainId: domain.id }, await this.input.read(body, file));
    return presentDocument(document);
  }

  @Get()
  @ApiOperation({ summary: "List a public domain's documents, newest first" })
  @ApiPagination()
  @ApiOkResponse({ type: DocumentPage })
  @ApiErrors({ 404: NO_SUCH_DOMAIN })
  async listDomainDocuments(
    @Param('slug') slug: string,
    @Pagination() page: PageRequest & { url: URL },
  ): Promise<Page<DocumentResponse>> {
    const domain = await this.domains.getVisible(pathSlug(slug, 'Domain'), true);
    const { count, documents } = await this.documents.list({ domainId: domain.id }, page);
    return toPage(
      page,
      count,
      documents.map((document) => presentDocument(document)),
    );
  }

  @Get(':id')
  @ApiOperation({ summary: "One of a public domain's documents, with its text" })
  @DOCUMENT_ID()
  @ApiOkResponse({ type: DocumentWithContentResponse })
  @ApiErrors({ 404: NO_SUCH_DOCUMENT })
  async getDomainDocument(
    @Param('slug') slug: string,
    @Param('id', new UuidPathPipe('Document')) id: string,
  ): Promise<DocumentResponse> {
    const domain = await this.domains.getVisible(pathSlug(slug, 'Domain'), true);
    return presentDocument(await this.documents.get({ domainId: domain.id }, id), true);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: "Remove a document from a public domain's knowledge base" })
  @DOCUMENT_ID()
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: NO_SUCH_DOCUMENT })
  async deleteDomainDocument(
    @Param('slug') slug: string,
    @Param('id', new UuidPathPipe('Document')) id: string,
  ): Promise<void> {
    const domain = await this.domains.getVisible(pathSlug(slug, 'Domain'), true);
    await this.documents.remove({ domainId: domain.id }, id);
  }
}
