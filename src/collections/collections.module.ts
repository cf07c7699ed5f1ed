import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RetrievalModule } from '../retrieval/retrieval.module.js';
import { Collection } from './collection.entity.js';
import { CollectionPurger } from './collection-purger.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsRepository } from './collections.repository.js';
import { CollectionsService } from './collections.service.js';

/** An organization's collections (`/v1/collections`), and which of them a caller may reach. */
@Module({
  imports: [TypeOrmModule.forFeature([Collection]), RetrievalModule],
  controllers: [CollectionsController],
  providers: [CollectionsService, CollectionsRepository, CollectionPurger],
  exports: [CollectionsService],
})
export class CollectionsModule {}
