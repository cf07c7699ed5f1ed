import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One line of the usage ledger: who spent how many credits on what, and when. */
@Entity('usage_events')
export class UsageEvent {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ name: 'api_key_id', type: 'uuid', nullable: true })
  apiKeyId: string | null;

  @Column({ name: 'key_prefix', type: 'varchar', length: 12, nullable: true })
  keyPrefix: string | null;

  @Column({ type: 'varchar', length: 30 })
  operation: string;

  @Column({ type: 'varchar', length: 50, nullable: true })
  domain: string | null;

  @Column({ type: 'integer' })
  credits: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;
}
