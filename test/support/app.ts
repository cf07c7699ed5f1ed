import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { type CreateAppOptions, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { connect, createTestDatabase, type TestDatabase } from './database.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long';
export const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };

export interface TestApp {
  app: INestApplication;
  http: () => ReturnType<typeof request>;
  server: Server;
  /** `http://127.0.0.1:<port>`, for clients other than supertest. */
  url: string;
  db: pg.Client;
  database: TestDatabase;
  close(): Promise<void>;
}

/** Boots the service as main.ts does, on a fresh database, listening on a loopback port. */
export async function startTestApp(
  env: Record<string, string> = {},
  database?: TestDatabase,
  options: CreateAppOptions = {},
): Promise<TestApp> {
  const ownDatabase = !database;
  const target = database ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: target.url,
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LAST_USED_FLUSH_MS: '200',
    // The suite signs up and signs in hundreds of users from 127.0.0.1: the per-address limits before
    // authentication are lifted here, and set low by the tests that are about them.
    SIGNUP_LIMIT_PER_HOUR: '1000000',
    SIGNIN_LIMIT_PER_MINUTE: '1000000',
    TOKEN_LIMIT_PER_MINUTE: '1000000',
    FAILED_AUTH_LIMIT_PER_MINUTE: '1000000',
    // Two test workers, Chromium and PostgreSQL share two cores: a backend took over 3 s to start in
    // CI's run on a slow day, and the app's bootstrap failed on it.
    DATABASE_CONNECT_TIMEOUT_MS: '15000',
    ...env,
  });
  const app = await createApp(config, { logger: process.env.TEST_LOGS ? undefined : false, ...options });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const db = await connect(target.url);
  return {
    app,
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    db,
    database: target,
    http: () => request(server),
    async close() {
      await db.end();
      await app.close();
      if (ownDatabase) await target.drop();
    },
  };
}

export interface SignedInUser {
  id: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
  auth: { Authorization: string };
}

let userCounter = 0;

/** Registers a new user and signs them in. */
export async function signUp(
  test: TestApp,
  email = `user${++userCounter}-${Date.now()}@example.com`,
): Promise<SignedInUser> {
  const password = 'correct horse battery';
  const registered = await test.http().post('/auth/users/').send({ email, password }).expect(201);
  return { ...(await signIn(test, email, password)), id: registered.body.id, email };
}

export async function signIn(test: TestApp, email: string, password: string): Promise<SignedInUser> {
  const tokens = await test.http().post('/auth/jwt/create/').send({ email, password }).expect(200);
  return {
    id: '',
    email,
    password,
    access: tokens.body.access,
    refresh: tokens.body.refresh,
    auth: { Authorization: `Bearer ${tokens.body.access}` },
  };
}

export async function createKey(test: TestApp, user: SignedInUser, name = 'test key') {
  const response = await test.http().post('/v1/billings/api-keys/').set(user.auth).send({ name }).expect(201);
  return response.body as { id: string; key: string; key_prefix: string; [field: string]: unknown };
}
