import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One of an organization's private knowledge bases, and one BM25 corpus (its id is the `scope_id` of its
 * chunks and statistics). Every organization has `default`, whose id is the organization's own id.
 */
@Entity('collections')
export class Collection {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'jsonb', default: {} })
  metadata: Record<string, string | number>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;

  /** Set when it is deleted: out of every read from then on, while the purger deletes its documents. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true, select: false })
  deletedAt?: Date | null;
}

/** The organization's `default` collection: the one whose id is the organization's. */
export const isDefaultCollection = (collection: Pick<Collection, 'id' | 'organizationId'>): boolean =>
  collection.id === collection.organizationId;
