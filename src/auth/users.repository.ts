import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { ACCOUNT_CHANGE_CHANNEL } from './sessions.js';
import { User } from './user.entity.js';

/** What a request needs of an active account that belongs to an organization. */
export interface AccountRow {
  id: string;
  email: string;
  organization_id: string;
  is_admin: boolean;
  tokens_valid_after: Date | null;
}

/**
 * The `users` table. Methods that take an EntityManager run inside the caller's transaction
 * (registration, the administrator's update under its row lock).
 */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  existsByEmail(email: string): Promise<boolean> {
    return this.users.existsBy({ email });
  }

  insert(manager: EntityManager, user: Pick<User, 'email' | 'passwordHash' | 'isAdmin'>): Promise<User> {
    return manager.save(manager.create(User, user));
  }

  async setOrganization(manager: EntityManager, userId: string, organizationId: string): Promise<void> {
    await manager.update(User, { id: userId }, { organizationId });
  }

  /** The user's e-mail, the row locked until the transaction ends. */
  async lockEmail(manager: EntityManager, userId: string): Promise<string> {
    const rows: { email: string }[] = await manager.query('SELECT email FROM users WHERE id = $1 FOR UPDATE', [userId]);
    return rows[0].email;
  }

  /**
   * After the user's organization changed outside registration: no organization last switched to (as a
   * new account), and every instance's account cache forgets the account when the transaction commits.
   */
  async forgetLastOrganization(manager: EntityManager, userId: string): Promise<void> {
    await manager.query('UPDATE users SET last_organization_id = NULL WHERE id = $1', [userId]);
    await manager.query('SELECT pg_notify($1, $2)', [ACCOUNT_CHANGE_CHANNEL, userId]);
  }

  /** With its password hash, which is otherwise never read. */
  findWithPasswordHash(email: string): Promise<User | null> {
    return this.users
      .createQueryBuilder('user')
      .addSelect('user.passwordHash')
      .where('user.email = :email', { email })
      .getOne();
  }

  /** With its password hash, locked until the transaction ends. */
  lockWithPasswordHash(manager: EntityManager, email: string): Promise<User> {
    return manager
      .getRepository(User)
      .createQueryBuilder('user')
      .addSelect('user.passwordHash')
      .setLock('pessimistic_write')
      .where('user.email = :email', { email })
      .getOneOrFail();
  }

  async setLastOrganization(userId: string, organizationId: string): Promise<void> {
    await this.users.update({ id: userId }, { lastOrganizationId: organizationId });
  }

  async makeActiveAdmin(manager: EntityManager, userId: string, passwordHash: string): Promise<void> {
    await manager.update(User, { id: userId }, { isAdmin: true, isActive: true, passwordHash });
  }

  async findAccount(userId: string): Promise<AccountRow | undefined> {
    const rows: AccountRow[] = await this.users.query(
      'SELECT id, email, organization_id, is_admin, tokens_valid_after FROM users WHERE id = $1 AND is_active AND organization_id IS NOT NULL',
      [userId],
    );
    return rows[0];
  }

  /**
   * Ends every session of a user: all refresh tokens are revoked, and access tokens issued until `at`
   * are refused (every instance's account cache forgets the account when the transaction commits). For sign-out
   * everywhere, promotion to administrator and a password change. Once the transaction has committed,
   * the caller waits for `afterCutOff(at)` before answering (see there).
   */
  async endAllSessions(manager: EntityManager, userId: string, at: Date): Promise<void> {
    await manager.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [
      userId,
    ]);
    // The service's clock, as for `iat`, not the database's: the two are compared.
    await manager.query(`UPDATE users SET tokens_valid_after = $2 WHERE id = $1`, [userId, at]);
    await manager.query('SELECT pg_notify($1, $2)', [ACCOUNT_CHANGE_CHANNEL, userId]);
  }
}
