import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * `svc_` + 32 random base62 characters (~190 bits) + a 6-character base62 CRC32 of those 32, the format
 * GitHub uses for its tokens: a mistyped or made-up key fails the checksum before any database access,
 * and a leaked key is easy to recognise.
 */
export const API_KEY_PREFIX = 'svc_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const VISIBLE_RANDOM_CHARS = 8;
const KEY_SHAPE = /^svc_[0-9A-Za-z]{38}$/;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function checksumOf(randomPart: string): string {
  let value = crc32(randomPart);
  let digits = '';
  while (value > 0) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits.padStart(CHECKSUM_LENGTH, '0');
}

export function generateApiKey(): GeneratedApiKey {
  let randomPart = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) randomPart += BASE62[randomInt(62)];
  const key = `${API_KEY_PREFIX}${randomPart}${checksumOf(randomPart)}`;
  return { key, prefix: keyPrefixOf(key), hash: hashApiKey(key) };
}

/** True when the value has the key's shape and its checksum matches: no database needed. */
export function isWellFormedApiKey(value: string): boolean {
  if (!KEY_SHAPE.test(value)) return false;
  const randomPart = value.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + RANDOM_LENGTH);
  return value.slice(-CHECKSUM_LENGTH) === checksumOf(randomPart);
}

export function keyPrefixOf(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + VISIBLE_RANDOM_CHARS);
}

/** Keys carry ~190 random bits, so a fast hash is safe; a slow password hash would cost every request. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
