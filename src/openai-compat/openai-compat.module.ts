import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { DocumentsModule } from '../documents/documents.module.js';
import { DomainsModule } from '../domains/domains.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { QueryModule } from '../query/query.module.js';
import { AttachAdmission } from './attach-admission.js';
import { AttachQueue } from './attach-queue.js';
import { AttachWorker } from './attach-worker.js';
import { ChatCompletionsController } from './chat-completions.controller.js';
import { ChatCompletionsService } from './chat-completions.service.js';
import { ModelsController } from './models.controller.js';
import { ModelsService } from './models.service.js';
import { FilesController, VectorStoresController } from './vector-stores.controller.js';
import { VectorStoresRepository } from './vector-stores.repository.js';
import { VectorStoresService } from './vector-stores.service.js';

/** OpenAI's chat completions and models over the knowledge base, for OpenAI client libraries. */
@Module({
  imports: [CollectionsModule, DocumentsModule, DomainsModule, OrganizationsModule, QueryModule],
  controllers: [ChatCompletionsController, ModelsController, VectorStoresController, FilesController],
  providers: [
    ChatCompletionsService,
    ModelsService,
    VectorStoresService,
    VectorStoresRepository,
    AttachQueue,
    AttachWorker,
    AttachAdmission,
  ],
})
export class OpenAiCompatModule {}
