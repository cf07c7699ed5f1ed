import type pg from 'pg';
import { signUp, startTestApp, type SignedInUser, type TestApp } from './app.js';

export const KEYS = '/v1/billings/api-keys/';

/** A fresh app with two users, Alice and Bob, as each API-key test file starts. */
export async function startWithAliceAndBob(): Promise<{ test: TestApp; alice: SignedInUser; bob: SignedInUser }> {
  const test = await startTestApp();
  return { test, alice: await signUp(test, 'alice@example.com'), bob: await signUp(test, 'bob@example.com') };
}

export const countKeys = async (db: pg.Client) =>
  (await db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n as number;

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export interface PartnerKey {
  id: string;
  key: string;
  key_prefix: string;
  [field: string]: unknown;
}

/** Creates a key for `user` with partner settings (scopes, limits, metadata), expecting 201. */
export async function partnerKey(
  test: TestApp,
  user: SignedInUser,
  settings: Record<string, unknown>,
): Promise<PartnerKey> {
  const response = await test
    .http()
    .post(KEYS)
    .set(user.auth)
    .send({ name: 'partner', ...settings })
    .expect(201);
  return response.body as PartnerKey;
}
