import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { HttpRequest } from '../../common/request.js';
import { Strategy } from 'passport-custom';
import { ApiKeyAuthenticator } from '../../api-keys/api-key-authenticator.js';
import { ApiKeyInvalidError } from '../../common/errors.js';
import type { Principal } from '../../common/principal.js';
import { presentedCredential } from '../credential.js';
import { MembershipCache } from '../membership-cache.js';
import { principalOf } from '../principal.js';

/** `svc_` keys, from `Authorization: Bearer` or `X-API-Key`, as picked by the composite guard. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, 'api-key') {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly memberships: MembershipCache,
  ) {
    super();
  }

  /** A key verified recently, which an address refused for failed credentials may still use. */
  isKnown(presented: string): boolean {
    return this.authenticator.isKnown(presented);
  }

  /**
   * Called by passport-custom with the request: the key is the credential already read from it. The key
   * acts with the role its creator has in its organization now; a creator no longer a member (whose
   * keys there were revoked on removal) has none, and the key is refused.
   */
  async validate(request: HttpRequest): Promise<Principal> {
    const apiKey = await this.authenticator.grantFor(presentedCredential(request)?.value ?? '');
    const role = await this.memberships.roleOf(apiKey.organizationId, apiKey.userId);
    if (!role) throw new ApiKeyInvalidError();
    return principalOf({ apiKey, role });
  }
}
