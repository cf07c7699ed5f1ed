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
