import { createHash } from 'node:crypto';
import {
  checksumOf,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  keyPrefixOf,
} from '../../src/api-keys/key-format.js';

/**
 * The contract's key format: `svc_` + 32 base62 characters from a CSPRNG + 6-character checksum, the
 * CRC32 (IEEE, as zlib computes it) of those 32 characters in base62 (`0-9A-Za-z`), left-padded with 0.
 * The expected checksums below were computed with Python's zlib, independently of the service.
 */
describe('API key format', () => {
  it.each([
    ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '3i8aJj'], // crc32 = 3400603511
    ['ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ', '2etF9n'], // crc32 = 2436485411
    ['0123456789abcdefghijABCDEFGHIJxy', '0PImn9'], // crc32 = 373885863: one leading pad digit
    ['k0000000000000000000000000000002', '0EWavS'], // crc32 = 214637146
  ])('computes the checksum of %s as %s (zlib CRC32 in base62, padded to 6)', (random, checksum) => {
    expect(checksumOf(random)).toBe(checksum);
    expect(isWellFormedApiKey(`svc_${random}${checksum}`)).toBe(true);
  });

  it('generates svc_ + 32 base62 characters + their checksum', () => {
    for (let i = 0; i < 200; i++) {
      const { key } = generateApiKey();
      expect(key).toMatch(/^svc_[0-9A-Za-z]{38}$/);
      expect(key.slice(36)).toBe(checksumOf(key.slice(4, 36)));
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it('exposes svc_ plus the first 8 random characters as the prefix, and the SHA-256 hex as the hash', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(prefix).toBe(key.slice(0, 12));
    expect(keyPrefixOf(key)).toBe(prefix);
    expect(hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toBe(hash);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('draws random parts that do not repeat and use the whole alphabet', () => {
    const randoms = Array.from({ length: 2000 }, () => generateApiKey().key.slice(4, 36));
    expect(new Set(randoms).size).toBe(randoms.length);
    const seen = new Set(randoms.join(''));
    expect(seen.size).toBe(62);
    // 64,000 characters over 62 symbols: about 1,032 each; a biased or narrowed generator shows here.
    const counts = new Map<string, number>();
    for (const char of randoms.join('')) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(Math.min(...counts.values())).toBeGreaterThan(850);
    expect(Math.max(...counts.values())).toBeLessThan(1250);
  });

  describe('refuses without a lookup', () => {
    const { key } = generateApiKey();
    const flip = (value: string, index: number) =>
      value.slice(0, index) + (value[index] === 'a' ? 'b' : 'a') + value.slice(index + 1);

    it.each([
      ['one random character changed', flip(key, 10)],
      ['the last random character changed', flip(key, 35)],
      ['a checksum character changed', flip(key, 39)],
      [
        'the checksum in the other case',
        key.slice(0, 36) +
          key.slice(36).replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())),
      ],
      ['one character short', key.slice(0, -1)],
      ['one character long', `${key}0`],
      ['another prefix', `sk_${key.slice(4)}`],
      ['an upper-case prefix', `SVC_${key.slice(4)}`],
      ['a non-base62 character', `${key.slice(0, 20)}-${key.slice(21)}`],
      ['white space inside', `${key.slice(0, 20)} ${key.slice(21)}`],
      ['the prefix alone', 'svc_'],
      ['empty', ''],
    ])('a key with %s', (_, candidate) => {
      expect(isWellFormedApiKey(candidate)).toBe(false);
    });
  });
});
