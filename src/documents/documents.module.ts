import { Module } from '@nestjs/common';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { DocumentInputReader } from './document-input.js';
import { DocumentsController } from './documents.controller.js';
import { DocumentsService } from './documents.service.js';
import { DocumentUploadInterceptor } from './upload.interceptor.js';

@Module({
  imports: [RetrievalModule],
  controllers: [DocumentsController],
  providers: [DocumentsService, DocumentInputReader, DocumentUploadInterceptor],
  exports: [DocumentsService, DocumentInputReader, DocumentUploadInterceptor],
})
export class DocumentsModule {}
