import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One row per issued refresh token, so logout can revoke it. Keyed by the token's `jti`. */
@Entity('refresh_tokens')
export class RefreshToken {
  @PrimaryColumn({ type: 'uuid' })
  jti: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** The jti of the first token of the sign-in this token descends from (rotation). */
  @Column({ name: 'family_id', type: 'uuid' })
  familyId: string;

  /** The token that replaced this one in a rotation; presenting this one again is reuse. */
  @Column({ name: 'replaced_by', type: 'uuid', nullable: true })
  replacedBy: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', update: false })
  createdAt: Date;
}
