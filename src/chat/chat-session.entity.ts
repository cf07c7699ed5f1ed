import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('chat_sessions')
export class ChatSession {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** Sessions belong to one user: anyone else gets a 404. */
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  /** Public domain slug the session asks, or null for the private knowledge base. */
  @Column({ type: 'varchar', length: 50, nullable: true })
  domain: string | null;

  /**
   * The collections of the API key that opened the session (null: every collection). A key limited to
   * collections finds only sessions opened within its own, and the session asks only these.
   */
  @Column({ name: 'collection_ids', type: 'uuid', array: true, nullable: true })
  collectionIds: string[] | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;

  /** Set by the database clock, like created_at, so the two always compare truthfully. */
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  updatedAt: Date;
}
