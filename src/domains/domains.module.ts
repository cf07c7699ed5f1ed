import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DocumentsModule } from '../documents/documents.module.js';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { DomainDocumentsController } from './domain-documents.controller.js';
import { DomainsController } from './domains.controller.js';
import { DomainsRepository } from './domains.repository.js';
import { DomainsService } from './domains.service.js';
import { RegionsController } from './regions.controller.js';
import { RegionsRepository } from './regions.repository.js';
import { RegionsService } from './regions.service.js';
import { Domain } from './domain.entity.js';
import { Region } from './region.entity.js';

/** Regions and public domains (admin-managed), and the documents of each domain. */
@Module({
  imports: [TypeOrmModule.forFeature([Domain, Region]), DocumentsModule, RetrievalModule],
  controllers: [RegionsController, DomainsController, DomainDocumentsController],
  providers: [RegionsService, DomainsService, RegionsRepository, DomainsRepository],
  exports: [DomainsService],
})
export class DomainsModule {}
