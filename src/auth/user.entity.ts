import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Stored lower-cased; unique. */
  @Column({ type: 'varchar', length: 254 })
  email: string;

  /** argon2id PHC string; never serialized. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, select: false })
  passwordHash: string;

  @Column({ name: 'is_admin', type: 'boolean', default: false })
  isAdmin: boolean;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId: string | null;

  /** The organization the user last switched to: a sign-in without `organization_id` acts there. */
  @Column({ name: 'last_organization_id', type: 'uuid', nullable: true })
  lastOrganizationId: string | null;

  /** Access tokens issued before this moment are refused (sign out everywhere, promotion). */
  @Column({ name: 'tokens_valid_after', type: 'timestamptz', nullable: true })
  tokensValidAfter: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;
}
