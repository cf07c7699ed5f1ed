import { Body, Controller, Delete, Get, HttpCode, Param, Post, UploadedFile, UseInterceptors } from '@nestjs/common';
import { AdminOnly } from '../common/auth.decorators.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import { UuidPathPipe } from '../common/validation.js';
import { type DocumentRecord, presentDocument } from '../documents/document.presenter.js';
import { DocumentInputReader } from '../documents/document-input.js';
import { DocumentsService } from '../documents/documents.service.js';
import type { UploadedFile as Upload } from '../documents/extraction/extract-upload.js';
import { DocumentUploadInterceptor } from '../documents/upload.interceptor.js';
import { DomainsService } from './domains.service.js';
import { pathSlug } from './regions.controller.js';

/** A public domain's knowledge base: administrators only, inactive domains included. */
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
  async create(
    @Param('slug') slug: string,
    @Body() body: Record<string, unknown>,
    @UploadedFile() file?: Upload,
  ): Promise<DocumentRecord> {
    const domain = await this.domains.getVisible(pathSlug(slug), true);
    const document = await this.documents.create({ domainId: domain.id }, await this.input.read(body, file));
    return presentDocument(document);
  }

  @Get()
  async list(@Param('slug') slug: string, @Pagination() page: PageRequest & { url: URL }): Promise<Page<DocumentRecord>> {
    const domain = await this.domains.getVisible(pathSlug(slug), true);
    const { count, documents } = await this.documents.list({ domainId: domain.id }, page);
    return toPage(page, count, documents.map((document) => presentDocument(document)));
  }

  @Get(':id')
  async get(@Param('slug') slug: string, @Param('id', UuidPathPipe) id: string): Promise<DocumentRecord> {
    const domain = await this.domains.getVisible(pathSlug(slug), true);
    return presentDocument(await this.documents.get({ domainId: domain.id }, id), true);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('slug') slug: string, @Param('id', UuidPathPipe) id: string): Promise<void> {
    const domain = await this.domains.getVisible(pathSlug(slug), true);
    await this.documents.remove({ domainId: domain.id }, id);
  }
}
