import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { DomainsController } from './domains.controller.js';
import { DomainsRepository } from './domains.repository.js';
import { DomainsService } from './domains.service.js';
import { RegionsController } from './regions.controller.js';
import { RegionsRepository } from './regions.repository.js';
import { RegionsService } from './regions.service.js';
import { Domain } from './domain.entity.js';
import { Region } from './region.entity.js';

/** Regions and public domains (admin-managed); their documents live in documents/. */
@Module({
  imports: [TypeOrmModule.forFeature([Domain, Region]), RetrievalModule],
  controllers: [RegionsController, DomainsController],
  providers: [RegionsService, DomainsService, RegionsRepository, DomainsRepository],
  exports: [DomainsService],
})
export class DomainsModule {}
