import { createKey, type SignedInUser, signIn, signUp, startTestApp, type TestApp } from '../support/app.js';
import { API_KEY_MESSAGE, ISO_MICROS, JWT_INVALID, keyWorks } from '../support/core.js';
import { ACCEPT, addMember, invite, MEMBERS, organizationOf, PERMISSION_DENIED, switchTo } from '../support/teams.js';

const TRANSFER = '/v1/organizations/current/transfer-ownership/';
const EVENTS = '/v1/organizations/current/events/';
const ORG_KEYS = '/v1/organizations/current/api-keys/';

async function userId(test: TestApp, user: SignedInUser): Promise<string> {
  return (await test.http().get('/auth/users/me/').set(user.auth).expect(200)).body.id;
}

describe('teams: members', () => {
  let test: TestApp;
  let owner: SignedInUser;
  let ownerId: string;
  let organizationId: string;
  beforeAll(async () => {
    test = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    owner = await signUp(test);
    ownerId = await userId(test, owner);
    organizationId = await organizationOf(test, owner);
  });
  afterAll(() => test.close());

  it('lists the members, the owner first, paginated', async () => {
    const member = await addMember(test, owner, 'member');
    const page = await test.http().get(`${MEMBERS}?limit=1`).set(member.auth).expect(200);
    expect(page.body).toEqual({
      count: expect.any(Number),
      next: expect.stringContaining('offset=1'),
      previous: null,
      results: [{ user_id: ownerId, email: owner.email, role: 'owner', joined_at: expect.stringMatching(ISO_MICROS) }],
    });
    const all = await test.http().get(`${MEMBERS}?limit=100`).set(owner.auth).expect(200);
    expect(all.body.results).toContainEqual({
      user_id: await userId(test, member),
      email: member.email,
      role: 'member',
      joined_at: expect.stringMatching(ISO_MICROS),
    });
  });

  it("changes a member's role; refuses owner (400), the owner's own (409), a stranger (404) and a member caller (403)", async () => {
    const member = await addMember(test, owner, 'member');
    const memberId = await userId(test, member);
    const changed = await test
      .http()
      .patch(`${MEMBERS}${memberId}/`)
      .set(owner.auth)
      .send({ role: 'admin' })
      .expect(200);
    expect(changed.body).toEqual({
      user_id: memberId,
      email: member.email,
      role: 'admin',
      joined_at: expect.any(String),
    });
    expect((await test.http().get('/auth/users/me/').set(member.auth)).body.role).toBe('admin');

    const toOwner = await test
      .http()
      .patch(`${MEMBERS}${memberId}/`)
      .set(owner.auth)
      .send({ role: 'owner' })
      .expect(400);
    expect(toOwner.body.fields.role[0]).toMatch(/^"owner" is not a valid choice/);

    const demoteOwner = await test
      .http()
      .patch(`${MEMBERS}${ownerId}/`)
      .set(member.auth)
      .send({ role: 'viewer' })
      .expect(409);
    expect(demoteOwner.body).toEqual({ detail: "The owner's role cannot be changed; transfer ownership instead." });

    const stranger = await signUp(test);
    const strangerId = await userId(test, stranger);
    const missing = await test
      .http()
      .patch(`${MEMBERS}${strangerId}/`)
      .set(owner.auth)
      .send({ role: 'viewer' })
      .expect(404);
    expect(missing.body).toEqual({ detail: `Member "${strangerId}" not found.` });
    await test.http().patch(`${MEMBERS}not-a-uuid/`).set(owner.auth).send({ role: 'viewer' }).expect(404);

    const plain = await addMember(test, owner, 'member');
    const refused = await test
      .http()
      .patch(`${MEMBERS}${memberId}/`)
      .set(plain.auth)
      .send({ role: 'viewer' })
      .expect(403);
    expect(refused.body).toEqual(PERMISSION_DENIED);
  });

  it("answers 404 for another organization's member", async () => {
    const other = await signUp(test);
    const theirs = await addMember(test, other, 'member');
    const theirsId = await userId(test, theirs);
    await test.http().patch(`${MEMBERS}${theirsId}/`).set(owner.auth).send({ role: 'viewer' }).expect(404);
    await test.http().delete(`${MEMBERS}${theirsId}/`).set(owner.auth).expect(404);
    const { rows } = await test.db.query('SELECT role FROM memberships WHERE user_id = $1 AND organization_id <> $2', [
      theirsId,
      organizationId,
    ]);
    expect(rows.map((row: { role: string }) => row.role).sort()).toEqual(['member', 'owner']);
  });

  it('removes a member: its keys here are revoked and its tokens stop acting here; the owner cannot be removed (409)', async () => {
    const member = await addMember(test, owner, 'member');
    const memberId = await userId(test, member);
    const key = await createKey(test, member, 'team key');
    expect(await keyWorks(test, key.key)).toBe(true);

    await test.http().delete(`${MEMBERS}${memberId}/`).set(owner.auth).expect(204);
    expect(await keyWorks(test, key.key)).toBe(false);
    const { rows } = await test.db.query('SELECT is_active, revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].is_active).toBe(false);
    expect(rows[0].revoked_at).not.toBeNull();
    const afterRemoval = await test.http().get('/v1/organizations/current/').set(member.auth).expect(401);
    expect(afterRemoval.body).toEqual(JWT_INVALID);
    // Its refresh token for this organization stops too.
    await test.http().post('/auth/jwt/refresh/').send({ refresh: member.refresh }).expect(401);
    // A fresh sign-in acts in its own organization again.
    const signedIn = await test
      .http()
      .post('/auth/jwt/create/')
      .send({ email: member.email, password: member.password })
      .expect(200);
    const me = await test
      .http()
      .get('/auth/users/me/')
      .set('Authorization', `Bearer ${signedIn.body.access}`)
      .expect(200);
    expect(me.body.role).toBe('owner');
    expect(me.body.organization_id).not.toBe(organizationId);

    const admin = await addMember(test, owner, 'admin');
    const ownerRemoved = await test.http().delete(`${MEMBERS}${ownerId}/`).set(admin.auth).expect(409);
    expect(ownerRemoved.body).toEqual({
      detail: 'The owner cannot be removed from the organization; transfer ownership first.',
    });
  });

  it('keeps the tokens issued before a removal stopped when the member is invited back', async () => {
    const member = await addMember(test, owner, 'member');
    const memberId = await userId(test, member);
    await test.http().delete(`${MEMBERS}${memberId}/`).set(owner.auth).expect(204);
    // Joining again happens in a later second than the old tokens' `iat` (whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const rejoined = await signIn(test, member.email, member.password);
    const { token } = await invite(test, owner, member.email, 'viewer');
    await test.http().post(ACCEPT).set(rejoined.auth).send({ token }).expect(200);

    const oldAccess = await test.http().get('/auth/users/me/').set(member.auth).expect(401);
    expect(oldAccess.body).toEqual(JWT_INVALID);
    const oldRefresh = await test.http().post('/auth/jwt/refresh/').send({ refresh: member.refresh }).expect(401);
    expect(oldRefresh.body.code).toBe('token_not_valid');
    // Tokens issued for the new membership act there, with its role.
    const fresh = await switchTo(test, rejoined, organizationId);
    const me = await test.http().get('/auth/users/me/').set(fresh.auth).expect(200);
    expect(me.body).toMatchObject({ organization_id: organizationId, role: 'viewer' });
    await test.http().post('/auth/jwt/refresh/').send({ refresh: fresh.refresh }).expect(200);
  });

  it('leaves no working key to a member removed while it was creating keys (each one made is revoked)', async () => {
    const member = await addMember(test, owner, 'member');
    const memberId = await userId(test, member);
    // Sent now (a supertest request leaves only when awaited), racing the removal.
    const creates = Array.from({ length: 10 }, async (_, i) =>
      test
        .http()
        .post('/v1/billings/api-keys/')
        .set(member.auth)
        .send({ name: `racing ${i}` }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    await test.http().delete(`${MEMBERS}${memberId}/`).set(owner.auth).expect(204);
    const answers = await Promise.all(creates);
    // Each create ran before the removal (its key then revoked with the others) or after it (refused).
    for (const answer of answers) expect([201, 401, 403]).toContain(answer.status);
    const { rows } = await test.db.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1 AND user_id = $2 AND revoked_at IS NULL',
      [organizationId, memberId],
    );
    expect(rows[0].n).toBe(0);
  });

  it("keeps a member's chat sessions in the organization they were made in (a removed member loses them)", async () => {
    const member = await addMember(test, owner, 'member');
    const session = (
      await test.http().post('/v1/chat/sessions/').set(member.auth).send({ title: 'Team chat' }).expect(201)
    ).body;
    await test.http().get(`/v1/chat/sessions/${session.id}/`).set(member.auth).expect(200);
    await test
      .http()
      .delete(`${MEMBERS}${await userId(test, member)}/`)
      .set(owner.auth)
      .expect(204);
    const signedIn = await test
      .http()
      .post('/auth/jwt/create/')
      .send({ email: member.email, password: member.password })
      .expect(200);
    const ownAuth = { Authorization: `Bearer ${signedIn.body.access}` };
    await test.http().get(`/v1/chat/sessions/${session.id}/`).set(ownAuth).expect(404);
    const listed = await test.http().get('/v1/chat/sessions/').set(ownAuth).expect(200);
    expect(listed.body.count).toBe(0);
  });

  it('lets a member leave (not the owner: 409), and not remove others unless admin (403)', async () => {
    const leaver = await addMember(test, owner, 'viewer');
    const other = await addMember(test, owner, 'member');
    const refused = await test
      .http()
      .delete(`${MEMBERS}${await userId(test, other)}/`)
      .set(leaver.auth)
      .expect(403);
    expect(refused.body).toEqual(PERMISSION_DENIED);
    await test
      .http()
      .delete(`${MEMBERS}${await userId(test, leaver)}/`)
      .set(leaver.auth)
      .expect(204);
    await test.http().get(MEMBERS).set(leaver.auth).expect(401);

    const ownerLeaving = await test.http().delete(`${MEMBERS}${ownerId}/`).set(owner.auth).expect(409);
    expect(ownerLeaving.body).toEqual({ detail: 'The owner cannot leave the organization; transfer ownership first.' });
  });

  it('transfers ownership: the former owner becomes admin; owner only; a non-member is 404', async () => {
    const founder = await signUp(test);
    const founderId = await userId(test, founder);
    const heir = await addMember(test, founder, 'member');
    const heirId = await userId(test, heir);
    const refused = await test.http().post(TRANSFER).set(heir.auth).send({ user_id: heirId }).expect(403);
    expect(refused.body).toEqual(PERMISSION_DENIED);
    const stranger = await signUp(test);
    await test
      .http()
      .post(TRANSFER)
      .set(founder.auth)
      .send({ user_id: await userId(test, stranger) })
      .expect(404);
    const self = await test.http().post(TRANSFER).set(founder.auth).send({ user_id: founderId }).expect(400);
    expect(self.body).toEqual({ detail: 'You already own this organization.' });
    const bad = await test.http().post(TRANSFER).set(founder.auth).send({ user_id: 'x' }).expect(400);
    expect(bad.body.fields).toEqual({ user_id: ['Must be a valid UUID.'] });

    const done = await test.http().post(TRANSFER).set(founder.auth).send({ user_id: heirId }).expect(200);
    expect(done.body).toMatchObject({ user_id: heirId, role: 'owner' });
    expect((await test.http().get('/auth/users/me/').set(founder.auth).expect(200)).body.role).toBe('admin');
    expect((await test.http().get('/auth/users/me/').set(heir.auth).expect(200)).body.role).toBe('owner');
    const organization = await organizationOf(test, heir);
    const { rows } = await test.db.query('SELECT owner_id FROM organizations WHERE id = $1', [organization]);
    expect(rows[0].owner_id).toBe(heirId);
    const owners = await test.db.query(
      `SELECT user_id FROM memberships WHERE organization_id = $1 AND role = 'owner'`,
      [organization],
    );
    expect(owners.rows).toEqual([{ user_id: heirId }]);
    // The former owner, now an admin, may leave.
    await test.http().delete(`${MEMBERS}${founderId}/`).set(founder.auth).expect(204);
  });

  /**
   * A user whose last membership ended (left, or removed) signs in: a new organization of its own, as
   * registration gives (owner, `default` collection, subscription), the only one it belongs to; it can
   * accept an invitation; its tokens for the organization it lost stay refused.
   */
  async function expectOwnNewOrganization(user: SignedInUser, lost: string[]): Promise<SignedInUser> {
    await test.http().get('/auth/users/me/').set(user.auth).expect(401);
    const again = await signIn(test, user.email, user.password);
    const me = (await test.http().get('/auth/users/me/').set(again.auth).expect(200)).body;
    expect(lost).not.toContain(me.organization_id);
    expect(me.role).toBe('owner');
    expect(me.organizations).toEqual([
      { id: me.organization_id, name: `${user.email.split('@')[0]}'s organization`, role: 'owner' },
    ]);
    const { rows } = await test.db.query('SELECT owner_id FROM organizations WHERE id = $1', [me.organization_id]);
    expect(rows).toEqual([{ owner_id: me.id }]);
    const collections = await test.http().get('/v1/collections/').set(again.auth).expect(200);
    expect(collections.body.results.map((c: { name: string }) => c.name)).toEqual(['default']);
    await test.http().get('/v1/billings/subscription/').set(again.auth).expect(200);
    await test.http().get('/auth/users/me/').set(user.auth).expect(401);

    const host = await signUp(test);
    const { token } = await invite(test, host, user.email, 'member');
    const accepted = await test.http().post(ACCEPT).set(again.auth).send({ token }).expect(200);
    expect(accepted.body).toEqual({ organization_id: await organizationOf(test, host), role: 'member' });
    const after = (await test.http().get('/auth/users/me/').set(again.auth).expect(200)).body;
    expect(after.organizations).toHaveLength(2);
    return again;
  }

  it('gives a former owner who then left a new organization of its own on sign-in', async () => {
    const founder = await signUp(test);
    const founderId = await userId(test, founder);
    const founded = await organizationOf(test, founder);
    const heir = await addMember(test, founder, 'member');
    await test
      .http()
      .post(TRANSFER)
      .set(founder.auth)
      .send({ user_id: await userId(test, heir) })
      .expect(200);
    await test.http().delete(`${MEMBERS}${founderId}/`).set(founder.auth).expect(204);
    await expectOwnNewOrganization(founder, [founded]);
  });

  it('gives a member removed from its only organization a new one of its own', async () => {
    // Registers, hands its own organization to someone else and leaves it, joins X, is removed from X.
    const wanderer = await signUp(test);
    const wandererId = await userId(test, wanderer);
    const ownOrganization = await organizationOf(test, wanderer);
    const heir = await addMember(test, wanderer, 'member');
    await test
      .http()
      .post(TRANSFER)
      .set(wanderer.auth)
      .send({ user_id: await userId(test, heir) })
      .expect(200);
    const hostOfX = await signUp(test);
    const x = await organizationOf(test, hostOfX);
    const { token } = await invite(test, hostOfX, wanderer.email, 'viewer');
    await test.http().post(ACCEPT).set(wanderer.auth).send({ token }).expect(200);
    await test.http().delete(`${MEMBERS}${wandererId}/`).set(wanderer.auth).expect(204);
    const inX = await switchTo(test, await signIn(test, wanderer.email, wanderer.password), x);
    expect((await test.http().get('/auth/users/me/').set(inX.auth).expect(200)).body.organizations).toEqual([
      { id: x, name: expect.any(String), role: 'viewer' },
    ]);
    await test.http().delete(`${MEMBERS}${wandererId}/`).set(hostOfX.auth).expect(204);
    await expectOwnNewOrganization(inX, [x, ownOrganization]);
  });

  it('keeps exactly one owner in every organization, and every user in one', async () => {
    const { rows } = await test.db.query(
      `SELECT o.id FROM organizations o
        WHERE (SELECT count(*) FROM memberships m WHERE m.organization_id = o.id AND m.role = 'owner') <> 1
           OR NOT EXISTS (SELECT 1 FROM memberships m WHERE m.organization_id = o.id AND m.user_id = o.owner_id AND m.role = 'owner')`,
    );
    expect(rows).toEqual([]);
    const homeless = await test.db.query(
      'SELECT id FROM users u WHERE NOT EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)',
    );
    expect(homeless.rows).toEqual([]);
  });

  it('keeps exactly one owner per organization in the database', async () => {
    await expect(
      test.db.query(
        `INSERT INTO memberships (organization_id, user_id, role) SELECT $1, id, 'owner' FROM users WHERE id <> $2 LIMIT 1`,
        [organizationId, ownerId],
      ),
    ).rejects.toThrow(/memberships_one_owner|duplicate key/);
  });

  it('lists every key of the organization with created_by, and lets an admin revoke any (JWT only)', async () => {
    const admin = await addMember(test, owner, 'admin');
    const member = await addMember(test, owner, 'member');
    const memberKey = await createKey(test, member, 'member key');
    const listed = await test.http().get(`${ORG_KEYS}?limit=100`).set(admin.auth).expect(200);
    const entry = listed.body.results.find((key: { id: string }) => key.id === memberKey.id);
    expect(entry).toMatchObject({
      id: memberKey.id,
      name: 'member key',
      is_active: true,
      created_by: { user_id: await userId(test, member), email: member.email },
    });
    expect(entry.key).toBeUndefined();
    // The member's own list still shows only its own keys in this organization.
    const own = await test.http().get('/v1/billings/api-keys/').set(member.auth).expect(200);
    expect(own.body.map((key: { id: string }) => key.id)).toEqual([memberKey.id]);

    const refused = await test.http().get(ORG_KEYS).set(member.auth).expect(403);
    expect(refused.body).toEqual(PERMISSION_DENIED);
    await test.http().get(ORG_KEYS).set('Authorization', `Bearer ${memberKey.key}`).expect(401);

    const revoked = await test.http().post(`${ORG_KEYS}${memberKey.id}/revoke/`).set(admin.auth).expect(200);
    expect(revoked.body).toMatchObject({ id: memberKey.id, is_active: false });
    const response = await test
      .http()
      .get('/auth/users/me/')
      .set('Authorization', `Bearer ${memberKey.key}`)
      .expect(401);
    expect(response.body).toEqual({ detail: API_KEY_MESSAGE });

    const elsewhere = await signUp(test);
    const foreign = await createKey(test, elsewhere);
    await test.http().post(`${ORG_KEYS}${foreign.id}/revoke/`).set(admin.auth).expect(404);
    expect(await keyWorks(test, foreign.key)).toBe(true);
  });

  it("keeps the organization's audit log: key and membership events, newest first, admins only", async () => {
    const founder = await signUp(test);
    const joiner = await addMember(test, founder, 'viewer');
    const joinerId = await userId(test, joiner);
    await test.http().patch(`${MEMBERS}${joinerId}/`).set(founder.auth).send({ role: 'member' }).expect(200);
    await createKey(test, founder);
    await test.http().delete(`${MEMBERS}${joinerId}/`).set(founder.auth).expect(204);

    const log = await test.http().get(EVENTS).set(founder.auth).expect(200);
    expect(log.body.results.map((event: { action: string }) => event.action)).toEqual([
      'member.removed',
      'api_key.created',
      'member.role_changed',
      'member.joined',
      'member.invited',
    ]);
    const changed = log.body.results[2];
    expect(changed).toEqual({
      id: expect.any(String),
      action: 'member.role_changed',
      actor_user_id: await userId(test, founder),
      target_user_id: joinerId,
      changes: { role: ['viewer', 'member'] },
      request_id: expect.any(String),
      ip: expect.any(String),
      created_at: expect.stringMatching(ISO_MICROS),
      key_id: null,
      key_prefix: null,
    });
    expect(log.body.count).toBe(5);

    const member = await addMember(test, founder, 'member');
    await test.http().get(EVENTS).set(member.auth).expect(403);
    // The key audit log of the second edition: admins and the owner too.
    await test.http().get('/v1/billings/api-keys/events/').set(member.auth).expect(403);
    await test.http().get('/v1/billings/api-keys/events/').set(founder.auth).expect(200);
  });

  it("reports this period's usage per member", async () => {
    const founder = await signUp(test);
    const member = await addMember(test, founder, 'member');
    await test
      .http()
      .post('/v1/documents/')
      .set(founder.auth)
      .send({ title: 'Runbook', content: 'Restart the worker.' })
      .expect(201);
    await test.http().post('/v1/query/').set(member.auth).send({ query: 'restart?' }).expect(200);
    await test.http().post('/v1/query/').set(member.auth).send({ query: 'worker?' }).expect(200);
    const usage = await test.http().get('/v1/billings/usage/members/').set(founder.auth).expect(200);
    expect(usage.body).toEqual([
      { user_id: await userId(test, member), email: member.email, requests: 2, credits: 2 },
      { user_id: await userId(test, founder), email: founder.email, requests: 0, credits: 0 },
    ]);
  });

  it('records member.joined and member.removed webhook events (user_id, role) with the change', async () => {
    const founder = await signUp(test);
    await test
      .http()
      .post('/v1/webhooks/')
      .set(founder.auth)
      .send({ url: 'http://127.0.0.1:9/hooks', events: ['member.joined', 'member.removed'] })
      .expect(201);
    const joiner = await addMember(test, founder, 'member');
    const joinerId = await userId(test, joiner);
    await test.http().delete(`${MEMBERS}${joinerId}/`).set(founder.auth).expect(204);
    const { rows } = await test.db.query(
      `SELECT type, payload FROM webhook_events WHERE organization_id = $1 ORDER BY created_at`,
      [await organizationOf(test, founder)],
    );
    expect(rows.map((row: { type: string; payload: { data: unknown } }) => [row.type, row.payload.data])).toEqual([
      ['member.joined', { user_id: joinerId, role: 'member' }],
      ['member.removed', { user_id: joinerId, role: 'member' }],
    ]);
  });
});
