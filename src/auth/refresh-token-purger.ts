import { Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/hourly-purge.js';
import { RefreshTokensRepository } from './refresh-tokens.repository.js';

/** Refresh-token rows past their expiry: an expired token fails its signature check, so its row serves nothing. */
@Injectable()
export class RefreshTokenPurger extends HourlyPurge {
  protected readonly what = 'refresh-token';

  constructor(private readonly tokens: RefreshTokensRepository) {
    super();
  }

  protected deleteBatch(limit: number): Promise<number> {
    return this.tokens.deleteExpired(limit);
  }
}
