import { Body, Controller, Delete, Get, HttpCode, Param, Post, UploadedFile, UseInterceptors } from '@nestjs/common';
import { CurrentPrincipal } from '../common/auth.decorators.js';
import { type Page, type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { type DocumentRecord, presentDocument } from './document.presenter.js';
import { DocumentInputReader } from './document-input.js';
import { DocumentsService } from './documents.service.js';
import type { UploadedFile as Upload } from './extraction/extract-upload.js';
import { DocumentUploadInterceptor } from './upload.interceptor.js';

/** The caller's organization's private knowledge base; JWT or API key. */
@Controller('v1/documents')
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly input: DocumentInputReader,
  ) {}

  /** JSON `{title, content, metadata?}` or a multipart upload with `file`. The body is validated by the reader. */
  @Post()
  @UseInterceptors(DocumentUploadInterceptor)
  async create(
    @CurrentPrincipal() caller: Principal,
    @Body() body: Record<string, unknown>,
    @UploadedFile() file?: Upload,
  ): Promise<DocumentRecord> {
    const document = await this.documents.create({ organizationId: caller.organizationId }, await this.input.read(body, file));
    return presentDocument(document);
  }

  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }): Promise<Page<DocumentRecord>> {
    const { count, documents } = await this.documents.list({ organizationId: caller.organizationId }, page);
    return toPage(page, count, documents.map((document) => presentDocument(document)));
  }

  @Get(':id')
  async get(@CurrentPrincipal() caller: Principal, @Param('id', UuidPathPipe) id: string): Promise<DocumentRecord> {
    return presentDocument(await this.documents.get({ organizationId: caller.organizationId }, id), true);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@CurrentPrincipal() caller: Principal, @Param('id', UuidPathPipe) id: string): Promise<void> {
    await this.documents.remove({ organizationId: caller.organizationId }, id);
  }
}
