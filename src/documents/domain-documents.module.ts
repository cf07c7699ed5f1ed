import { Module } from '@nestjs/common';
import { DomainsModule } from '../domains/domains.module.js';
import { DocumentsModule } from './documents.module.js';
import { DomainDocumentsController } from './domain-documents.controller.js';

/**
 * The documents of each public domain. Its own module, imported after DomainsModule, so documents
 * depend on domains (never the reverse) and the routes keep their order in /openapi.json.
 */
@Module({
  imports: [DocumentsModule, DomainsModule],
  controllers: [DomainDocumentsController],
})
export class DomainDocumentsModule {}
