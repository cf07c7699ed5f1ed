import { type DynamicModule, Module } from '@nestjs/common';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AuthModule } from './auth/auth.module.js';
import { BillingModule } from './billing/billing.module.js';
import { ChatModule } from './chat/chat.module.js';
import { CollectionsModule } from './collections/collections.module.js';
import { ConfigModule } from './config/config.module.js';
import type { AppConfig } from './config/env.schema.js';
import { DatabaseModule } from './database/database.module.js';
import { DocumentsModule } from './documents/documents.module.js';
import { DomainDocumentsModule } from './documents/domain-documents.module.js';
import { DomainsModule } from './domains/domains.module.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import type { DatabaseTarget } from './database/database.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { OpenAiCompatModule } from './openai-compat/openai-compat.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { ObservabilityModule } from './observability/observability.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QueryModule } from './query/query.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { RetrievalModule } from './retrieval/retrieval.module.js';
import { TeamsModule } from './teams/teams.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, database: DatabaseTarget): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(config, database),
        LifecycleModule,
        ObservabilityModule.forRoot(config),
        RateLimitModule,
        IdempotencyModule,
        AuthModule,
        ApiKeysModule,
        OrganizationsModule,
        BillingModule,
        RetrievalModule,
        CollectionsModule,
        DocumentsModule,
        DomainsModule,
        DomainDocumentsModule,
        QueryModule,
        ChatModule,
        TeamsModule,
        OpenAiCompatModule,
        McpModule,
        WebhooksModule,
      ],
    };
  }
}
