import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { DocumentsModule } from '../documents/documents.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { QueryModule } from '../query/query.module.js';
import { KnowledgeTools } from './knowledge-tools.js';
import { McpController } from './mcp.controller.js';
import { ReadableDocuments } from './readable-documents.js';

/** The knowledge base as Model Context Protocol tools (search, fetch, ask, list_knowledge_bases) for AI agents. */
@Module({
  imports: [CollectionsModule, DocumentsModule, DomainsModule, QueryModule],
  controllers: [McpController],
  providers: [KnowledgeTools, ReadableDocuments],
})
export class McpModule {}
