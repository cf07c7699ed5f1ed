import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CollectionsModule } from '../collections/collections.module.js';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { DocumentInputReader } from './document-input.js';
import { DocumentsController } from './documents.controller.js';
import { DocumentsRepository } from './documents.repository.js';
import { DocumentsService } from './documents.service.js';
import { DocumentExtractor } from './extraction/document-extractor.js';
import { SpoolSweeper } from './spool-directory.js';
import { UploadGate } from './upload-gate.js';
import { DocumentUploadInterceptor } from './upload.interceptor.js';
import { Document } from './document.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([Document]), RetrievalModule, CollectionsModule],
  controllers: [DocumentsController],
  providers: [
    DocumentsService,
    DocumentsRepository,
    DocumentInputReader,
    DocumentExtractor,
    DocumentUploadInterceptor,
    UploadGate,
    SpoolSweeper,
  ],
  exports: [DocumentsService, DocumentInputReader, DocumentExtractor, DocumentUploadInterceptor, UploadGate],
})
export class DocumentsModule {}
