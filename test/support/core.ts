import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import jwt from 'jsonwebtoken';
import type pg from 'pg';
import { LastUsedRecorder } from '../../src/api-keys/last-used-recorder.js';
import { TEST_JWT_SECRET, type TestApp } from './app.js';

/** Helpers for the core suite (auth, API keys, errors). Independent of the code under test where it matters. */

export const API_KEY_MESSAGE = 'Invalid or expired API key. Check that the key is active and has not expired.';
export const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
export const WWW_AUTHENTICATE = 'Bearer realm="api"';
export const JWT_INVALID = {
  detail: 'Given token not valid for any token type',
  code: 'token_not_valid',
  messages: [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is invalid or expired' }],
};
export const REFRESH_INVALID = { detail: 'Token is invalid or expired', code: 'token_not_valid' };
/** An unknown route's 404, verbatim from the contract. */
export const NOT_FOUND = { detail: 'Not found.' };
/** An unknown (or another organization's) resource: the 404 names its kind and what was sent. */
export const notFound = (kind: string, name: string) => ({ detail: `${kind} "${name}" not found.` });
export const BAD_CREDENTIALS = { detail: 'No active account found with the given credentials' };

export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for the next minute when fewer than `marginMs` are left in this one: the rate limits count in
 * fixed one-minute windows, and one rolling over mid-test would refill the bucket the test is spending.
 */
export async function freshMinute(marginMs = 20_000): Promise<void> {
  if (60_000 - (Date.now() % 60_000) < marginMs) await sleep(60_000 - (Date.now() % 60_000) + 50);
}

/** Polls `check` until it gives something other than undefined or false, and gives that; fails after `timeoutMs`. */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
): Promise<Exclude<T, false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, false>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The contract's checksum, computed here without the service's code: CRC32 in base62, padded to 6. */
export function contractChecksum(randomPart: string): string {
  let n = BigInt(crc32(Buffer.from(randomPart, 'utf8')) >>> 0);
  let out = '';
  do {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  } while (n > 0n);
  return out.padStart(6, '0');
}

/** A key of the right shape whose checksum is correct but that was never issued. */
export function madeUpKey(seed = 'x'): string {
  const random = (seed.repeat(32) + 'A'.repeat(32)).replace(/[^0-9A-Za-z]/g, 'Q').slice(0, 32);
  return `svc_${random}${contractChecksum(random)}`;
}

/** `key` with its last character changed: a checksum that no longer matches (never the same key again). */
export function lastCharacterChanged(key: string): string {
  return key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
}

/** Signs a token with the tests' secret; `claims` override the defaults of a valid access token. */
export function signToken(
  claims: Record<string, unknown>,
  secret = TEST_JWT_SECRET,
  algorithm: jwt.Algorithm = 'HS256',
): string {
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign(
    { token_type: 'access', jti: '0b4c7c36-5a5e-4b53-9f3b-2f1f8c1d1e01', iat: now, exp: now + 600, ...claims },
    secret,
    { algorithm, noTimestamp: true },
  );
}

/** An unsigned token (`alg: none`), built by hand as an attacker would. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ token_type: 'access', jti: '0b4c7c36-5a5e-4b53-9f3b-2f1f8c1d1e02', iat: now, exp: now + 600, ...claims })}.`;
}

/** Flips one character in the signature part. */
export function tamperSignature(token: string): string {
  const [header, payload, signature] = token.split('.');
  const index = Math.floor(signature.length / 2);
  const flipped = signature[index] === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, index)}${flipped}${signature.slice(index + 1)}`;
}

export function decodeClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

export function decodeHeader(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
}

const CORE_TABLES = ['organizations', 'users', 'refresh_tokens', 'api_keys'];

/** Every row of the core tables, as text, after writing any buffered `last_used_at` stamps. */
export async function storedState(test: TestApp): Promise<Record<string, string[]>> {
  await test.app.get(LastUsedRecorder).flush();
  const state: Record<string, string[]> = {};
  for (const table of CORE_TABLES) {
    const { rows } = await test.db.query(`SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY 1`);
    state[table] = rows.map((row: { row: string }) => row.row);
  }
  return state;
}

/** Runs `work` and asserts that no stored row changed meanwhile. */
export async function expectNoStoredChange(test: TestApp, work: () => Promise<unknown>): Promise<void> {
  const before = await storedState(test);
  await work();
  expect(await storedState(test)).toEqual(before);
}

/** created_at as PostgreSQL holds it, in the contract's format, for comparing microseconds. */
export async function storedMicros(db: pg.Client, table: string, column: string, id: string): Promise<string | null> {
  const { rows } = await db.query(
    `SELECT to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS value FROM ${table} WHERE id = $1`,
    [id],
  );
  return rows[0]?.value ?? null;
}

export async function keyRow(db: pg.Client, id: string) {
  const { rows } = await db.query('SELECT * FROM api_keys WHERE id = $1', [id]);
  return rows[0];
}

/** Whether `key` authenticates a request (the caller's own profile is a route any credential may use). */
export async function keyWorks(
  test: TestApp,
  key: string,
  header: 'bearer' | 'x-api-key' = 'bearer',
): Promise<boolean> {
  const request = test.http().get('/auth/users/me/');
  const response = await (header === 'bearer'
    ? request.set('Authorization', `Bearer ${key}`)
    : request.set('X-API-Key', key));
  if (response.status === 200) return true;
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ detail: API_KEY_MESSAGE });
  return false;
}

/** An ISO timestamp `ms` from now, in UTC with a `Z`. */
export function fromNow(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}
