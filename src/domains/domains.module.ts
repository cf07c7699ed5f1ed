import { Module } from '@nestjs/common';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { DomainsController } from './domains.controller.js';
import { DomainsService } from './domains.service.js';
import { RegionsController } from './regions.controller.js';
import { RegionsService } from './regions.service.js';

/** Regions and public domains (admin-managed); their documents live in documents/. */
@Module({
  imports: [RetrievalModule],
  controllers: [RegionsController, DomainsController],
  providers: [RegionsService, DomainsService],
  exports: [DomainsService],
})
export class DomainsModule {}
