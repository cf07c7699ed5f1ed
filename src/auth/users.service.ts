import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUniqueViolation } from '../database/pg-errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { InvalidCredentialsError, ValidationFailedError } from '../common/errors.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PasswordHasher } from './password-hasher.js';
import { User } from './user.entity.js';

export const EMAIL_TAKEN = 'A user with that email already exists.';

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly passwords: PasswordHasher,
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The administrator named by ADMIN_EMAIL/ADMIN_PASSWORD exists at every boot. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.ADMIN_EMAIL && this.config.ADMIN_PASSWORD) {
      await this.ensureAdmin(this.config.ADMIN_EMAIL, this.config.ADMIN_PASSWORD);
    }
  }

  /** A new user with their own organization, in one transaction. */
  async register(email: string, password: string, isAdmin = false): Promise<User> {
    const normalized = email.toLowerCase();
    const users = this.dataSource.getRepository(User);
    if (await users.existsBy({ email: normalized })) throw ValidationFailedError.field('email', EMAIL_TAKEN);
    const passwordHash = await this.passwords.hash(password);
    try {
      return await this.dataSource.transaction(async (manager) => {
        const user = await manager.save(manager.create(User, { email: normalized, passwordHash, isAdmin }));
        const organization = await this.organizations.createForOwner(manager, user.id, normalized);
        await manager.update(User, { id: user.id }, { organizationId: organization.id });
        return Object.assign(user, { organizationId: organization.id });
      });
    } catch (error) {
      // Two sign-ups racing for one address: the unique index decides.
      if (isUniqueViolation(error)) {
        throw ValidationFailedError.field('email', EMAIL_TAKEN);
      }
      throw error;
    }
  }

  /** The active user with these credentials, or the contract's 401. */
  async authenticate(email: string, password: string): Promise<User> {
    const user = await this.dataSource
      .getRepository(User)
      .createQueryBuilder('user')
      .addSelect('user.passwordHash')
      .where('user.email = :email', { email: email.toLowerCase() })
      .getOne();
    const matches = await this.passwords.verify(user?.passwordHash, password);
    if (!user || !matches || !user.isActive) throw new InvalidCredentialsError();
    return user;
  }

  /** Creates the admin, or promotes the existing account and sets its password to the one given. */
  async ensureAdmin(email: string, password: string): Promise<User> {
    let existing = await this.dataSource.getRepository(User).findOneBy({ email: email.toLowerCase() });
    if (!existing) {
      try {
        const admin = await this.register(email, password, true);
        this.logger.log(`created administrator ${admin.email}`);
        return admin;
      } catch (error) {
        // Another instance booting at the same moment created it first: promote that account instead.
        if (!(error instanceof ValidationFailedError)) throw error;
        existing = await this.dataSource.getRepository(User).findOneByOrFail({ email: email.toLowerCase() });
      }
    }
    const current = await this.dataSource
      .getRepository(User)
      .createQueryBuilder('user')
      .addSelect('user.passwordHash')
      .where('user.id = :id', { id: existing.id })
      .getOneOrFail();
    const passwordHash = (await this.passwords.verify(current.passwordHash, password))
      ? current.passwordHash
      : await this.passwords.hash(password);
    await this.dataSource.getRepository(User).update({ id: existing.id }, { isAdmin: true, isActive: true, passwordHash });
    return Object.assign(existing, { isAdmin: true, isActive: true });
  }
}
