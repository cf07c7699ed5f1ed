import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer, Reflector } from '@nestjs/core';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { requirementOf } from '../../src/common/auth.decorators.js';
import { loadConfig } from '../../src/config/env.schema.js';
import { migrations } from '../../src/database/migrations/index.js';
import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { bearer } from '../support/api-keys.js';
import { decodeClaims, JWT_INVALID, signToken } from '../support/core.js';
import { createTestDatabase } from '../support/database.js';
import { ACCEPT, addMember, invite, MEMBERS, organizationOf, PERMISSION_DENIED, switchTo } from '../support/teams.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('teams: roles', () => {
  let test: TestApp;
  let owner: SignedInUser;
  let organizationId: string;
  beforeAll(async () => {
    test = await startTestApp();
    owner = await signUp(test);
    organizationId = await organizationOf(test, owner);
  });
  afterAll(() => test.close());

  it('has every route declare the lowest role it needs (or be public)', () => {
    const reflector = test.app.get(Reflector);
    const undeclared: string[] = [];
    let routes = 0;
    for (const module of test.app.get(ModulesContainer).values()) {
      for (const { metatype: controller } of module.controllers.values()) {
        if (!controller) continue;
        const prototype = controller.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(prototype)) {
          const handler = prototype[name];
          if (name === 'constructor' || typeof handler !== 'function') continue;
          if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          routes++;
          const requirement = requirementOf(reflector, { handler, controller });
          if (!requirement.public && !requirement.role) undeclared.push(`${controller.name}.${name}`);
        }
      }
    }
    expect(routes).toBeGreaterThan(40);
    expect(undeclared).toEqual([]);
  });

  it('documents the role in /openapi.json as x-required-role, like scopes', async () => {
    const document = (await test.http().get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { security?: unknown[]; 'x-required-role'?: string }>>;
    };
    const undeclared: string[] = [];
    for (const [path, item] of Object.entries(document.paths))
      for (const method of METHODS) {
        const operation = item[method];
        if (operation?.security?.length && !operation['x-required-role']) undeclared.push(`${method} ${path}`);
      }
    expect(undeclared).toEqual([]);
    expect(document.paths['/v1/organizations/current/'].patch['x-required-role']).toBe('admin');
    expect(document.paths['/v1/documents/'].post['x-required-role']).toBe('member');
    expect(document.paths['/v1/query/'].post['x-required-role']).toBe('viewer');
    expect(document.paths['/v1/organizations/current/transfer-ownership/'].post['x-required-role']).toBe('owner');
  });

  it('lets a viewer read and query, but not upload or manage keys (403)', async () => {
    await test
      .http()
      .post('/v1/documents/')
      .set(owner.auth)
      .send({ title: 'Guide', content: 'Turn it off and on.' })
      .expect(201);
    const viewer = await addMember(test, owner, 'viewer');
    await test.http().get('/v1/documents/').set(viewer.auth).expect(200);
    await test.http().post('/v1/query/').set(viewer.auth).send({ query: 'turn it off?' }).expect(200);
    await test.http().get(MEMBERS).set(viewer.auth).expect(200);
    await test.http().get('/v1/billings/subscription/').set(viewer.auth).expect(200);
    const upload = await test
      .http()
      .post('/v1/documents/')
      .set(viewer.auth)
      .send({ title: 'x', content: 'y' })
      .expect(403);
    expect(upload.body).toEqual(PERMISSION_DENIED);
    const key = await test.http().post('/v1/billings/api-keys/').set(viewer.auth).send({ name: 'nope' }).expect(403);
    expect(key.body).toEqual(PERMISSION_DENIED);
    await test.http().get('/v1/billings/api-keys/').set(viewer.auth).expect(200);
  });

  it("refuses a member's key and a viewer's key on an admin route (403), and a demoted member's key is narrowed", async () => {
    const member = await addMember(test, owner, 'member');
    const memberKey = await createKey(test, member, 'member key');
    const patched = await test
      .http()
      .patch('/v1/organizations/current/')
      .set(bearer(memberKey.key))
      .send({ name: 'Mine now' })
      .expect(403);
    expect(patched.body).toEqual(PERMISSION_DENIED);
    await test.http().post('/v1/documents/').set(bearer(memberKey.key)).send({ title: 'a', content: 'b' }).expect(201);

    const memberId = (await test.http().get('/auth/users/me/').set(member.auth)).body.id;
    await test.http().patch(`${MEMBERS}${memberId}/`).set(owner.auth).send({ role: 'viewer' }).expect(200);
    // The key keeps working, with the viewer's rights only.
    const me = await test.http().get('/auth/users/me/').set(bearer(memberKey.key)).expect(200);
    expect(me.body).toMatchObject({ organization_id: organizationId, role: 'viewer' });
    const upload = await test
      .http()
      .post('/v1/documents/')
      .set(bearer(memberKey.key))
      .send({ title: 'a', content: 'b' });
    expect(upload.status).toBe(403);
    expect(upload.body).toEqual(PERMISSION_DENIED);
    await test.http().patch('/v1/organizations/current/').set(bearer(memberKey.key)).send({ name: 'x' }).expect(403);
    await test.http().get('/v1/documents/').set(bearer(memberKey.key)).expect(200);
  });

  it('opens the organization, webhooks and the key audit log to admins (not members)', async () => {
    const admin = await addMember(test, owner, 'admin');
    const member = await addMember(test, owner, 'member');
    await test
      .http()
      .patch('/v1/organizations/current/')
      .set(admin.auth)
      .send({ name: 'Renamed by an admin' })
      .expect(200);
    await test.http().patch('/v1/organizations/current/').set(member.auth).send({ name: 'No' }).expect(403);
    await test.http().get('/v1/webhooks/').set(admin.auth).expect(200);
    const hooks = await test.http().get('/v1/webhooks/').set(member.auth).expect(403);
    expect(hooks.body).toEqual(PERMISSION_DENIED);
    await test.http().get('/v1/billings/api-keys/events/').set(admin.auth).expect(200);
    await test.http().get('/v1/billings/api-keys/events/').set(member.auth).expect(403);
    // In an organization of one, nothing changes: the owner may do it all.
    const alone = await signUp(test);
    await test.http().patch('/v1/organizations/current/').set(alone.auth).send({ name: 'Solo' }).expect(200);
    await test.http().get('/v1/billings/api-keys/events/').set(alone.auth).expect(200);
  });

  describe('the active organization in the JWT', () => {
    it('acts in the organization as stored whatever the case of organization_id at sign-in: a removal stops it at once', async () => {
      const guest = await addMember(test, owner, 'member');
      const guestId = (await test.http().get('/auth/users/me/').set(guest.auth).expect(200)).body.id;
      const signedIn = await test
        .http()
        .post('/auth/jwt/create/')
        .send({ email: guest.email, password: guest.password, organization_id: organizationId.toUpperCase() })
        .expect(200);
      expect(decodeClaims(signedIn.body.access).organization_id).toBe(organizationId);
      const auth = bearer(signedIn.body.access);
      expect((await test.http().get('/auth/users/me/').set(auth).expect(200)).body.organization_id).toBe(
        organizationId,
      );

      await test.http().delete(`${MEMBERS}${guestId}/`).set(owner.auth).expect(204);
      expect((await test.http().get('/v1/documents/').set(auth).expect(401)).body).toEqual(JWT_INVALID);
      await test.http().post('/auth/jwt/refresh/').send({ refresh: signedIn.body.refresh }).expect(401);
    });

    it('refuses at once, after a removal, a token that carries its organization_id in upper case', async () => {
      const guest = await addMember(test, owner, 'member');
      const claims = decodeClaims(guest.access);
      const upper = signToken({ ...claims, organization_id: organizationId.toUpperCase() });
      expect((await test.http().get('/auth/users/me/').set(bearer(upper)).expect(200)).body.organization_id).toBe(
        organizationId,
      );
      await test
        .http()
        .delete(`${MEMBERS}${String(claims.user_id)}/`)
        .set(owner.auth)
        .expect(204);
      expect((await test.http().get('/v1/documents/').set(bearer(upper)).expect(401)).body).toEqual(JWT_INVALID);
    });

    it('switches to an organization one belongs to, and not to another (404)', async () => {
      const guest = await signUp(test);
      const ownOrganization = await organizationOf(test, guest);
      const { token } = await invite(test, owner, guest.email, 'member');
      await test.http().post(ACCEPT).set(guest.auth).send({ token }).expect(200);

      const switched = await switchTo(test, guest, organizationId);
      expect(decodeClaims(switched.access)).toMatchObject({ organization_id: organizationId, token_type: 'access' });
      expect(decodeClaims(switched.refresh)).toMatchObject({ organization_id: organizationId, token_type: 'refresh' });
      const me = await test.http().get('/auth/users/me/').set(switched.auth).expect(200);
      expect(me.body).toMatchObject({ organization_id: organizationId, role: 'member' });
      expect((await test.http().get('/v1/organizations/current/').set(switched.auth)).body.id).toBe(organizationId);
      // Refreshing keeps the organization.
      const refreshed = await test.http().post('/auth/jwt/refresh/').send({ refresh: switched.refresh }).expect(200);
      expect(decodeClaims(refreshed.body.access)).toMatchObject({ organization_id: organizationId });

      // A sign-in without organization_id acts where the user last switched to.
      const later = await test
        .http()
        .post('/auth/jwt/create/')
        .send({ email: guest.email, password: guest.password })
        .expect(200);
      expect(decodeClaims(later.body.access).organization_id).toBe(organizationId);
      // ...or where it asks.
      const own = await test
        .http()
        .post('/auth/jwt/create/')
        .send({ email: guest.email, password: guest.password, organization_id: ownOrganization })
        .expect(200);
      expect(decodeClaims(own.body.access).organization_id).toBe(ownOrganization);

      const stranger = await signUp(test);
      const strangerOrganization = await organizationOf(test, stranger);
      const refused = await test
        .http()
        .post('/auth/jwt/switch/')
        .set(guest.auth)
        .send({ organization_id: strangerOrganization })
        .expect(404);
      expect(refused.body).toEqual({ detail: `Organization "${strangerOrganization}" not found.` });
      await test
        .http()
        .post('/auth/jwt/create/')
        .send({ email: guest.email, password: guest.password, organization_id: strangerOrganization })
        .expect(404);
      const bad = await test
        .http()
        .post('/auth/jwt/switch/')
        .set(guest.auth)
        .send({ organization_id: 'x' })
        .expect(400);
      expect(bad.body.fields).toEqual({ organization_id: ['Must be a valid UUID.'] });
      const key = await createKey(test, guest);
      await test
        .http()
        .post('/auth/jwt/switch/')
        .set(bearer(key.key))
        .send({ organization_id: organizationId })
        .expect(401);
    });

    it("lets a token issued before teams (no organization_id) act in the user's own organization", async () => {
      const user = await signUp(test);
      const id = (await test.http().get('/auth/users/me/').set(user.auth)).body.id;
      const old = signToken({ user_id: id });
      const me = await test.http().get('/auth/users/me/').set(bearer(old)).expect(200);
      expect(me.body).toMatchObject({ organization_id: await organizationOf(test, user), role: 'owner' });
      const forged = signToken({ user_id: id, organization_id: organizationId });
      const refused = await test.http().get('/auth/users/me/').set(bearer(forged)).expect(401);
      expect(refused.body).toEqual(JWT_INVALID);
    });
  });

  it('migrates existing data: every current owner becomes the owner member of its organization', async () => {
    const database = await createTestDatabase();
    // Every migration before Teams: the data of a service that had no memberships yet.
    const before = migrations.slice(
      0,
      migrations.findIndex((migration) => migration.name.startsWith('Teams')),
    );
    const source = new DataSource({ type: 'postgres', url: database.url, migrations: before });
    await source.initialize();
    try {
      await source.runMigrations({ transaction: 'each' });
      const [user] = await source.query(
        `INSERT INTO users (email, password_hash) VALUES ('old@example.com', 'x') RETURNING id`,
      );
      const [organization] = await source.query(
        `INSERT INTO organizations (name, owner_id) VALUES ('Old', $1) RETURNING id`,
        [user.id],
      );
      await source.query('UPDATE users SET organization_id = $1 WHERE id = $2', [organization.id, user.id]);
      await source.destroy();
      const after = new DataSource({ type: 'postgres', url: database.url, migrations });
      await after.initialize();
      await after.runMigrations({ transaction: 'each' });
      const rows = await after.query('SELECT organization_id, user_id, role FROM memberships');
      expect(rows).toEqual([{ organization_id: organization.id, user_id: user.id, role: 'owner' }]);
      await after.destroy();
    } finally {
      if (source.isInitialized) await source.destroy();
      await database.drop();
    }
  });

  it('runs on the embedded store (PGlite): invite, accept, switch, change a role, remove', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kqs-embedded-teams-'));
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir });
    expect(config.DATABASE_URL).toBeUndefined();
    const app = await createApp(config, { logger: false });
    await app.listen(0, '127.0.0.1');
    const http = () => request(app.getHttpServer() as Server);
    try {
      const signUpEmbedded = async (email: string) => {
        const password = 'embedded password';
        const registered = await http().post('/auth/users/').send({ email, password }).expect(201);
        const tokens = await http().post('/auth/jwt/create/').send({ email, password }).expect(200);
        return { id: registered.body.id as string, auth: { Authorization: `Bearer ${tokens.body.access}` } };
      };
      const boss = await signUpEmbedded('boss@example.com');
      const hire = await signUpEmbedded('hire@example.com');
      const invitation = await http()
        .post('/v1/organizations/current/invitations/')
        .set(boss.auth)
        .send({ email: 'HIRE@example.com', role: 'admin' })
        .expect(201);
      const joined = await http().post(ACCEPT).set(hire.auth).send({ token: invitation.body.token }).expect(200);
      const switched = await http()
        .post('/auth/jwt/switch/')
        .set(hire.auth)
        .send({ organization_id: joined.body.organization_id })
        .expect(200);
      const hireAuth = { Authorization: `Bearer ${switched.body.access}` };
      await http().patch('/v1/organizations/current/').set(hireAuth).send({ name: 'Ours' }).expect(200);
      await http().patch(`${MEMBERS}${hire.id}/`).set(boss.auth).send({ role: 'viewer' }).expect(200);
      await http().patch('/v1/organizations/current/').set(hireAuth).send({ name: 'No' }).expect(403);
      await http().delete(`${MEMBERS}${hire.id}/`).set(boss.auth).expect(204);
      await http().get('/v1/organizations/current/').set(hireAuth).expect(401);
    } finally {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
