import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { RefreshToken } from './refresh-token.entity.js';

/** The `refresh_tokens` table: one row per refresh token issued, so that each can be revoked. */
@Injectable()
export class RefreshTokensRepository {
  constructor(@InjectRepository(RefreshToken) private readonly tokens: Repository<RefreshToken>) {}

  /** The first token of a sign-in: it starts its own family. */
  async insertFirst(jti: string, userId: string, expiresAt: Date): Promise<void> {
    await this.tokens.insert({ jti, userId, familyId: jti, expiresAt, revokedAt: null });
  }

  /**
   * Spends a token and records its successor; false when the token was not usable (spent, revoked,
   * expired, or its user deactivated).
   */
  async rotate(jti: string, userId: string, successorJti: string, expiresAt: Date): Promise<boolean> {
    // One statement: spend the old token (only if still usable) and record its successor in the same
    // family. Two requests racing with one token queue on its row; the second finds it spent: reuse.
    const rows: { user_id: string }[] = await this.tokens.query(
      `WITH spent AS (
         UPDATE refresh_tokens r SET revoked_at = now(), replaced_by = $3
           FROM users u
          WHERE r.jti = $1 AND r.user_id = $2 AND u.id = r.user_id AND u.is_active
            AND r.revoked_at IS NULL AND r.expires_at > now()
         RETURNING r.user_id, r.family_id
       ), successor AS (
         INSERT INTO refresh_tokens (jti, user_id, family_id, expires_at)
         SELECT $3, user_id, family_id, $4 FROM spent
       )
       SELECT user_id FROM spent`,
      [jti, userId, successorJti, expiresAt],
    );
    return rows.length > 0;
  }

  /** Unrevoked, unexpired, and its user still active. */
  async isUsable(jti: string, userId: string): Promise<boolean> {
    const rows: unknown[] = await this.tokens.query(
      `SELECT 1 FROM refresh_tokens r JOIN users u ON u.id = r.user_id AND u.is_active
        WHERE r.jti = $1 AND r.user_id = $2 AND r.revoked_at IS NULL AND r.expires_at > now()`,
      [jti, userId],
    );
    return rows.length > 0;
  }

  async revoke(jti: string): Promise<void> {
    await this.tokens.update({ jti }, { revokedAt: new Date() });
  }

  /** Revokes the whole family of this token, if a rotation had already replaced it (otherwise nothing). */
  async revokeFamilyIfReplaced(jti: string, userId: string): Promise<void> {
    await this.tokens.query(
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE revoked_at IS NULL
          AND family_id = (SELECT family_id FROM refresh_tokens WHERE jti = $1 AND user_id = $2 AND replaced_by IS NOT NULL)`,
      [jti, userId],
    );
  }

  /**
   * Deletes up to `batch` expired rows; answers how many. Rows another instance is deleting are
   * skipped rather than waited for.
   */
  async deleteExpired(batch: number): Promise<number> {
    const [, deleted]: [unknown, number] = await this.tokens.query(
      `DELETE FROM refresh_tokens WHERE jti IN (
         SELECT jti FROM refresh_tokens WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [batch],
    );
    return deleted;
  }
}
