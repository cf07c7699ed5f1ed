import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type KeyAction = 'created' | 'updated' | 'rotated' | 'revoked';
/** For an update: each changed field with its value before and after. */
export type KeyChanges = Record<string, [unknown, unknown]>;

/**
 * One line of the key audit log, written in the transaction of the change it records. It never holds
 * a key value, hash or token: only ids, the prefix, and the settings that changed.
 */
@Entity('api_key_events')
export class ApiKeyEvent {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'key_id', type: 'uuid' })
  keyId: string;

  @Column({ name: 'key_prefix', type: 'varchar', length: 12 })
  keyPrefix: string;

  @Column({ type: 'varchar', length: 16 })
  action: KeyAction;

  @Column({ name: 'actor_user_id', type: 'uuid', nullable: true })
  actorUserId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  changes: KeyChanges | null;

  @Column({ name: 'request_id', type: 'varchar', length: 200, nullable: true })
  requestId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;
}
