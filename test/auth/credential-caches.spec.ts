import {
  UNKNOWN_KEYS_MAX_ENTRIES,
  VERIFIED_KEYS_MAX_ENTRIES,
  VerifiedKeyCache,
} from '../../src/api-keys/verified-key-cache.js';
import { ACCOUNT_CACHE_MAX_ENTRIES, AccountCache } from '../../src/auth/account-cache.js';
import type { UsersRepository } from '../../src/auth/users.repository.js';
import { MembershipCache } from '../../src/auth/membership-cache.js';
import type { MembershipsRepository } from '../../src/organizations/memberships.repository.js';
import type { ChangeSubscriber, KeyChangeListener } from '../../src/api-keys/key-change-listener.js';
import { VERIFIED_TOKENS_MAX_ENTRIES, VerifiedTokenCache } from '../../src/auth/verified-token-cache.js';

const CREDENTIALS = 100_000;

/** A change listener whose notifications are flowing (as once its connection is up). */
const syncedListener = {
  subscribe: (_channel: string, subscriber: ChangeSubscriber) => subscriber.setSynced(true),
} as unknown as KeyChangeListener;

/** Answers the account lookup for any id, counting the calls; `hold` keeps the next answer back until released. */
function usersTable() {
  let lookups = 0;
  let held: Promise<void> | null = null;
  const repository = {
    findAccount: async (id: string) => {
      lookups++;
      if (held) await held;
      return { id, email: `${id}@example.com`, organization_id: 'org', is_admin: false, tokens_valid_after: null };
    },
  } as unknown as UsersRepository;
  return {
    repository,
    lookups: () => lookups,
    hold(): () => void {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = null;
        release();
      };
    },
  };
}

describe('credential caches fed 100k distinct credentials', () => {
  it('keep at most ACCOUNT_CACHE_MAX_ENTRIES accounts, the latest among them', async () => {
    const users = usersTable();
    const cache = new AccountCache(users.repository, syncedListener);
    for (let i = 0; i < CREDENTIALS; i++) await cache.get(`user-${i}`);
    expect(cache.size).toBe(ACCOUNT_CACHE_MAX_ENTRIES);
    await cache.get(`user-${CREDENTIALS - 1}`);
    expect(users.lookups()).toBe(CREDENTIALS);
  });

  it('keep at most VERIFIED_TOKENS_MAX_ENTRIES verified tokens, the latest among them', () => {
    const cache = new VerifiedTokenCache();
    const expiresAtMs = Date.now() + 15 * 60_000;
    for (let i = 0; i < CREDENTIALS; i++)
      cache.remember(`token-${i}`, { userId: `user-${i}`, organizationId: null, issuedAt: 0, expiresAtMs });
    expect(cache.size).toBe(VERIFIED_TOKENS_MAX_ENTRIES);
    expect(cache.get(`token-${CREDENTIALS - 1}`)?.userId).toBe(`user-${CREDENTIALS - 1}`);
    expect(cache.get('token-0')).toBeUndefined();
  });

  it('keep at most VERIFIED_KEYS_MAX_ENTRIES keys and UNKNOWN_KEYS_MAX_ENTRIES unknown hashes', () => {
    const cache = new VerifiedKeyCache();
    for (let i = 0; i < CREDENTIALS; i++) {
      const grant = {
        keyId: `key-${i}`,
        userId: 'user',
        organizationId: 'org',
        keyPrefix: 'svc_',
        usableUntil: null,
        scopes: null,
        rateLimitPerMinute: null,
        collectionIds: null,
      };
      cache.set(`hash-${i}`, grant, cache.generation);
      cache.setUnknown(`forged-${i}`, cache.generation);
    }
    expect(cache.size).toBe(VERIFIED_KEYS_MAX_ENTRIES);
    expect(cache.unknownCount).toBe(UNKNOWN_KEYS_MAX_ENTRIES);
    expect(cache.get(`hash-${CREDENTIALS - 1}`)?.keyId).toBe(`key-${CREDENTIALS - 1}`);
    expect(cache.isUnknown(`forged-${CREDENTIALS - 1}`)).toBe(true);
  });
});

describe('credential caches and invalidation', () => {
  it('do not store an account read before it was forgotten', async () => {
    const users = usersTable();
    const cache = new AccountCache(users.repository, syncedListener);
    const release = users.hold();
    const reading = cache.get('user-1');
    cache.forget('user-1');
    release();
    await reading;
    await cache.get('user-1');
    expect(users.lookups()).toBe(2);
  });

  it('do not store a key or an unknown hash looked up before a key changed', () => {
    const cache = new VerifiedKeyCache();
    const generation = cache.generation;
    cache.invalidateKey('key-1');
    cache.set(
      'hash-1',
      {
        keyId: 'key-1',
        userId: 'user',
        organizationId: 'org',
        keyPrefix: 'svc_',
        usableUntil: null,
        scopes: null,
        rateLimitPerMinute: null,
        collectionIds: null,
      },
      generation,
    );
    cache.setUnknown('forged-1', generation);
    expect(cache.get('hash-1')).toBeUndefined();
    expect(cache.isUnknown('forged-1')).toBe(false);
  });

  it('drop the grants of an invalidated key and every unknown hash, and keep the other keys', () => {
    const cache = new VerifiedKeyCache();
    const grant = (keyId: string) => ({
      keyId,
      userId: 'user',
      organizationId: 'org',
      keyPrefix: 'svc_',
      usableUntil: null,
      scopes: null,
      rateLimitPerMinute: null,
      collectionIds: null,
    });
    cache.set('hash-1', grant('key-1'), cache.generation);
    cache.set('hash-2', grant('key-2'), cache.generation);
    cache.setUnknown('forged-1', cache.generation);
    cache.invalidateKey('key-1');
    expect(cache.get('hash-1')).toBeUndefined();
    expect(cache.get('hash-2')?.keyId).toBe('key-2');
    expect(cache.isUnknown('forged-1')).toBe(false);
  });
});

describe('credential caches under a burst of one credential', () => {
  it('share one account read among simultaneous misses, and start another after a forget', async () => {
    const users = usersTable();
    const cache = new AccountCache(users.repository, syncedListener);
    const release = users.hold();
    const burst = Array.from({ length: 12 }, () => cache.get('user-1'));
    expect(users.lookups()).toBe(1);
    cache.forget('user-1');
    const afterForget = cache.get('user-1');
    expect(users.lookups()).toBe(2);
    release();
    const accounts = await Promise.all([...burst, afterForget]);
    expect(accounts.map((account) => account?.id)).toEqual(Array(13).fill('user-1'));
    await cache.get('user-1');
    expect(users.lookups()).toBe(2);
  });

  it('share one role read among simultaneous misses, and start another after a forget', async () => {
    let lookups = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const memberships = {
      membershipOf: async () => {
        lookups++;
        await held;
        return { role: 'member', joinedAtSecond: 0 };
      },
    } as unknown as MembershipsRepository;
    const cache = new MembershipCache(memberships, syncedListener);
    const burst = Array.from({ length: 12 }, () => cache.roleOf('org-1', 'user-1'));
    expect(lookups).toBe(1);
    cache.forget('org-1', 'user-1');
    const afterForget = cache.roleOf('org-1', 'user-1');
    expect(lookups).toBe(2);
    release();
    expect(await Promise.all([...burst, afterForget])).toEqual(Array(13).fill('member'));
    await cache.roleOf('org-1', 'user-1');
    expect(lookups).toBe(2);
  });

  it('hand a failed read to every caller that shared it, and read again on the next miss', async () => {
    let lookups = 0;
    const users = {
      findAccount: () => {
        lookups++;
        if (lookups === 1) return Promise.reject(new Error('connection lost'));
        return Promise.resolve({
          id: 'user-1',
          email: 'a@example.com',
          organization_id: 'org',
          is_admin: false,
          tokens_valid_after: null,
        });
      },
    } as unknown as UsersRepository;
    const cache = new AccountCache(users, syncedListener);
    const results = await Promise.allSettled([cache.get('user-1'), cache.get('user-1')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((await cache.get('user-1'))?.id).toBe('user-1');
    expect(lookups).toBe(2);
  });
});
