import { Injectable } from '@nestjs/common';
import { PeriodicPurge } from '../common/periodic-purge.js';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';

/** Refresh-token rows past their expiry: an expired token fails its signature check, so its row serves nothing. */
@Injectable()
export class RefreshTokenPurger extends PeriodicPurge {
  protected readonly what = 'refresh-token';
  protected readonly intervalMs = 60 * 60_000;

  constructor(private readonly tokens: RefreshTokensRepository) {
    super();
  }

  protected deleteBatch(limit: number): Promise<number> {
    return this.tokens.deleteExpired(limit);
  }
}
