import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { CollectionsModule } from '../collections/collections.module.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { DomainsModule } from '../domains/domains.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { ANSWERER } from './answerers/answerer.js';
import { ExtractiveAnswerer } from './answerers/extractive.answerer.js';
import { LlmAnswerer } from './answerers/llm.answerer.js';
import { KnowledgeBaseService } from './knowledge-base.service.js';
import { QueryController } from './query.controller.js';
import { QueryService } from './query.service.js';
import { SearchController } from './search.controller.js';
import { SearchService } from './search.service.js';

/** With LLM_BASE_URL a model writes the answer; without, the extractive answerer does (no model). */
function chooseAnswerer(config: AppConfig) {
  return config.LLM_BASE_URL
    ? new LlmAnswerer({
        baseUrl: config.LLM_BASE_URL,
        apiKey: config.LLM_API_KEY,
        model: config.LLM_MODEL,
        timeoutMs: config.LLM_TIMEOUT_MS,
      })
    : new ExtractiveAnswerer();
}

@Module({
  imports: [BillingModule, CollectionsModule, DomainsModule, OrganizationsModule, RetrievalModule],
  controllers: [QueryController, SearchController],
  providers: [
    QueryService,
    SearchService,
    KnowledgeBaseService,
    { provide: ANSWERER, inject: [APP_CONFIG], useFactory: chooseAnswerer },
  ],
  exports: [QueryService, SearchService, KnowledgeBaseService],
})
export class QueryModule {}
