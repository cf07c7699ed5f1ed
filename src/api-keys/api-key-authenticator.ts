import { Injectable } from '@nestjs/common';
import { ApiKeyInvalidError } from '../common/errors.js';
import { SharedLookups } from '../common/shared-lookups.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { hashApiKey, isWellFormedApiKey } from './key-format.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { type KeyGrant, VerifiedKeyCache } from './verified-key-cache.js';

/** Turns a presented `svc_` key into its grant (auth/principal.ts makes the principal), or throws the spec's 401. */
@Injectable()
export class ApiKeyAuthenticator {
  /** A burst of one key (valid or forged) shares one database query. */
  private readonly lookups = new SharedLookups<string, KeyGrant | null>();

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly cache: VerifiedKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async grantFor(presented: string): Promise<KeyGrant> {
    if (!isWellFormedApiKey(presented)) throw new ApiKeyInvalidError();
    const hash = hashApiKey(presented);
    const grant = this.cache.get(hash) ?? (this.cache.isUnknown(hash) ? null : await this.lookUp(hash));
    if (!grant || (grant.usableUntil !== null && Date.now() >= grant.usableUntil)) throw new ApiKeyInvalidError();
    this.lastUsed.touch(grant.keyId);
    return grant;
  }

  /** Whether this key was verified recently (cached, still usable): it would cost no lookup. */
  isKnown(presented: string): boolean {
    if (!isWellFormedApiKey(presented)) return false;
    const grant = this.cache.get(hashApiKey(presented));
    return grant !== undefined && (grant.usableUntil === null || Date.now() < grant.usableUntil);
  }

  private lookUp(hash: string): Promise<KeyGrant | null> {
    return this.lookups.run(hash, this.cache.generation, () => this.load(hash));
  }

  private async load(hash: string): Promise<KeyGrant | null> {
    const generation = this.cache.generation;
    const row = await this.keys.findUsableByHash(hash);
    if (!row) {
      this.cache.setUnknown(hash, generation);
      return null;
    }
    const grant: KeyGrant = {
      keyId: row.id,
      userId: row.user_id,
      organizationId: row.organization_id,
      keyPrefix: row.key_prefix,
      usableUntil: row.usable_until ? row.usable_until.getTime() : null,
      scopes: row.scopes,
      rateLimitPerMinute: row.rate_limit_per_minute,
      collectionIds: row.collection_ids,
    };
    this.cache.set(hash, grant, generation);
    return grant;
  }
}
