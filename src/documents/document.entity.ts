import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A document of a public domain (`domainId`) or of one of an organization's collections
 * (`organizationId` and `collectionId`); exactly one owner is set. Its chunks live in `document_chunks`, written by the
 * retrieval module's SearchIndexRepository.
 */
@Entity('documents')
export class Document {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'domain_id', type: 'uuid', nullable: true })
  domainId: string | null;

  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId: string | null;

  /** The collection of a private document (its corpus id); null for a domain's document. */
  @Column({ name: 'collection_id', type: 'uuid', nullable: true })
  collectionId: string | null;

  @Column({ type: 'varchar', length: 300 })
  title: string;

  @Column({ type: 'text', select: false })
  content: string;

  @Column({ type: 'jsonb', default: {} })
  metadata: Record<string, string | number>;

  @Column({ name: 'content_type', type: 'varchar', length: 50 })
  contentType: string;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes: number;

  @Column({ name: 'chunk_count', type: 'integer', default: 0 })
  chunkCount: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;
}
