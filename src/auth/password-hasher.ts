import { Inject, Injectable } from '@nestjs/common';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { Semaphore } from './semaphore.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * argon2id for passwords. Hashes run on libuv's thread pool (4 threads, shared with file and DNS
 * work): PASSWORD_HASH_CONCURRENCY bounds how many run at once, so a burst of sign-ups or sign-ins
 * queues here instead of taking every thread and 19 MiB per hash.
 */
@Injectable()
export class PasswordHasher {
  /** Verified against when the e-mail is unknown, so a miss costs as long as a hit. */
  private readonly decoy = hash('decoy password, never valid', OPTIONS);
  private readonly slots: Semaphore;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.slots = new Semaphore(config.PASSWORD_HASH_CONCURRENCY);
  }

  hash(password: string): Promise<string> {
    return this.slots.run(() => hash(password, OPTIONS));
  }

  async verify(storedHash: string | undefined, password: string): Promise<boolean> {
    const against = storedHash ?? (await this.decoy);
    try {
      return await this.slots.run(() => verify(against, password));
    } catch {
      return false;
    }
  }
}
