import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { isUniqueViolation } from '../database/pg-errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { InvalidCredentialsError, NotFoundError, ValidationFailedError } from '../common/errors.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { MembershipsRepository } from '../organizations/memberships.repository.js';
import { AccountCache } from './account-cache.js';
import { MembershipCache } from './membership-cache.js';
import { PasswordHasher } from './password-hasher.js';
import { afterCutOff } from './sessions.js';
import type { User } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

export const EMAIL_TAKEN = 'A user with that email already exists.';

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    private readonly organizations: OrganizationsService,
    private readonly accounts: AccountCache,
    private readonly memberships: MembershipCache,
    private readonly organizationsOf: MembershipsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The administrator named by ADMIN_EMAIL/ADMIN_PASSWORD exists at every boot. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.ADMIN_EMAIL || !this.config.ADMIN_PASSWORD) return;
    try {
      await this.ensureAdmin(this.config.ADMIN_EMAIL, this.config.ADMIN_PASSWORD, {
        promoteExisting: this.config.ADMIN_PROMOTE_EXISTING,
      });
    } catch (error) {
      if (!(error instanceof AdminPromotionRefusedError)) throw error;
      // Boot goes on (the service is usable without its administrator), loudly.
      this.logger.error(
        `ADMIN_EMAIL: ${error.message}. Anyone can sign up with an address before it becomes ADMIN_EMAIL. ` +
          'If the account is yours, set ADMIN_PROMOTE_EXISTING=true (its sessions are ended and ADMIN_PASSWORD becomes its password); otherwise choose another address.',
      );
    }
  }

  /** A new user with their own organization, in one transaction. */
  async register(email: string, password: string, isAdmin = false): Promise<User> {
    const normalized = email.toLowerCase();
    if (await this.users.existsByEmail(normalized)) throw ValidationFailedError.field('email', EMAIL_TAKEN);
    const passwordHash = await this.passwords.hash(password);
    try {
      return await this.dataSource.transaction(async (manager) => {
        const user = await this.users.insert(manager, { email: normalized, passwordHash, isAdmin });
        const organizationId = await this.createOwnOrganization(manager, user.id, normalized);
        return Object.assign(user, { organizationId });
      });
    } catch (error) {
      // Two sign-ups racing for one address: the unique index decides.
      if (isUniqueViolation(error)) {
        throw ValidationFailedError.field('email', EMAIL_TAKEN);
      }
      throw error;
    }
  }

  /**
   * In the transaction that ends one of the user's memberships (a leave, a removal), after it: a user
   * who then belongs to no organization gets a new one of their own, as registration gives it (owner,
   * subscription, `default` collection), so a sign-in always has an organization to act in. The user's
   * row is locked first: of two memberships ending at once, the second to lock sees the first gone.
   * The new organization's id, or null when the user still belongs to one. After the commit the caller
   * forgets the account (`AccountCache.forget`); other instances hear it.
   */
  async ensureOwnOrganization(manager: EntityManager, userId: string): Promise<string | null> {
    const email = await this.users.lockEmail(manager, userId);
    if ((await this.organizationsOf.countOf(manager, userId)) > 0) return null;
    const organizationId = await this.createOwnOrganization(manager, userId, email);
    await this.users.forgetLastOrganization(manager, userId);
    return organizationId;
  }

  /** The user's own organization, as registration makes it; inside the caller's transaction. */
  private async createOwnOrganization(manager: EntityManager, userId: string, email: string): Promise<string> {
    const organization = await this.organizations.createForOwner(manager, userId, email);
    await this.users.setOrganization(manager, userId, organization.id);
    return organization.id;
  }

  /** The active user with these credentials, or the contract's 401. */
  async authenticate(email: string, password: string): Promise<User> {
    const user = await this.users.findWithPasswordHash(email.toLowerCase());
    const matches = await this.passwords.verify(user?.passwordHash, password);
    if (!user || !matches || !user.isActive) throw new InvalidCredentialsError();
    return user;
  }

  /**
   * The organization a sign-in acts in: the one asked for (a member's only: otherwise 404), else the
   * one the user last switched to while still a member there, else the user's own, else any other
   * the user belongs to.
   */
  async organizationForSignIn(user: User, requested: string | null): Promise<string> {
    if (requested) {
      // As stored: the token's organization is every cache's key and every comparison's operand.
      const id = requested.toLowerCase();
      if (!(await this.memberships.roleOf(id, user.id))) throw NotFoundError.named('Organization', requested);
      return id;
    }
    for (const candidate of [user.lastOrganizationId, user.organizationId]) {
      if (candidate && (await this.memberships.roleOf(candidate, user.id))) return candidate;
    }
    const others = await this.organizationsOf.organizationsOf(user.id);
    return others.length > 0 ? others[0].id : (user.organizationId ?? '');
  }

  /** Remembers the organization for later sign-ins; one the user is not a member of is a 404. */
  async switchTo(userId: string, organizationId: string): Promise<string> {
    const id = organizationId.toLowerCase();
    if (!(await this.memberships.roleOf(id, userId))) throw NotFoundError.named('Organization', organizationId);
    await this.users.setLastOrganization(userId, id);
    return id;
  }

  /**
   * Creates the administrator, or brings the existing one up to date (password, active). An existing
   * ordinary account is promoted only when asked (`promoteExisting`): otherwise whoever signed up
   * first with that address would become an administrator, keeping their password and sessions.
   * Promotion and a password change end every session of the account.
   */
  async ensureAdmin(
    email: string,
    password: string,
    options: { promoteExisting?: boolean } = {},
  ): Promise<EnsuredAdmin> {
    const normalized = email.toLowerCase();
    if (!(await this.users.existsByEmail(normalized))) {
      try {
        const admin = await this.register(normalized, password, true);
        this.logger.log(`created administrator ${admin.email}`);
        return { user: admin, outcome: 'created' };
      } catch (error) {
        // Another instance booting at the same moment created it first: bring that one up to date.
        if (!(error instanceof ValidationFailedError)) throw error;
      }
    }
    const endedAt = new Date();
    const result = await this.dataSource.transaction(async (manager) => {
      const current = await this.users.lockWithPasswordHash(manager, normalized);
      if (!current.isAdmin && !options.promoteExisting) throw new AdminPromotionRefusedError(current.email);
      const samePassword = await this.passwords.verify(current.passwordHash, password);
      const outcome: EnsuredAdmin['outcome'] = !current.isAdmin
        ? 'promoted'
        : samePassword
          ? 'unchanged'
          : 'password_changed';
      if (outcome === 'unchanged' && current.isActive) return { user: current, outcome };
      const passwordHash = samePassword ? current.passwordHash : await this.passwords.hash(password);
      await this.users.makeActiveAdmin(manager, current.id, passwordHash);
      if (outcome !== 'unchanged') await this.users.endAllSessions(manager, current.id, endedAt);
      return { user: Object.assign(current, { isAdmin: true, isActive: true }), outcome };
    });
    this.accounts.forget(result.user.id);
    if (result.outcome !== 'unchanged') await afterCutOff(endedAt);
    if (result.outcome === 'promoted')
      this.logger.warn(`promoted the existing account ${result.user.email} to administrator; its sessions were ended`);
    if (result.outcome === 'password_changed')
      this.logger.log(`set a new password for administrator ${result.user.email}; its sessions were ended`);
    return result;
  }
}

export interface EnsuredAdmin {
  user: User;
  outcome: 'created' | 'promoted' | 'password_changed' | 'unchanged';
}

/** ADMIN_EMAIL or create-admin named an ordinary account, and promotion was not asked for. */
export class AdminPromotionRefusedError extends Error {
  constructor(readonly email: string) {
    super(`${email} already exists as an ordinary account and was not made an administrator`);
  }
}
