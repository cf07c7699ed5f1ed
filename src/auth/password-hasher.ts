import { Injectable } from '@nestjs/common';
import { Algorithm, hash, verify } from '@node-rs/argon2';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

@Injectable()
export class PasswordHasher {
  /** Verified against when the e-mail is unknown, so a miss costs as long as a hit. */
  private readonly decoy = hash('decoy password, never valid', OPTIONS);

  hash(password: string): Promise<string> {
    return hash(password, OPTIONS);
  }

  async verify(storedHash: string | undefined, password: string): Promise<boolean> {
    try {
      return await verify(storedHash ?? (await this.decoy), password);
    } catch {
      return false;
    }
  }
}
