import { type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { ISO_MICROS, sha256Hex, UUID } from '../support/core.js';
import {
  ACCEPT,
  addMember,
  INVITATION_INVALID,
  INVITATIONS,
  invite,
  organizationOf,
  PERMISSION_DENIED,
} from '../support/teams.js';

let counter = 0;
const nextEmail = (prefix = 'guest') => `${prefix}${++counter}-${Date.now()}@example.com`;

describe('teams: invitations', () => {
  let test: TestApp;
  let owner: SignedInUser;
  let organizationId: string;
  beforeAll(async () => {
    test = await startTestApp();
    owner = await signUp(test);
    organizationId = await organizationOf(test, owner);
  });
  afterAll(() => test.close());

  it('answers the inv_ token once, stores only its hash, and expires in 7 days', async () => {
    const email = nextEmail();
    const created = await invite(test, owner, email, 'member');
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      email,
      role: 'member',
      created_at: expect.stringMatching(ISO_MICROS),
      expires_at: expect.stringMatching(ISO_MICROS),
      token: expect.stringMatching(/^inv_[0-9A-Za-z]{32}$/),
    });
    const days = (Date.parse(created.expires_at) - Date.parse(created.created_at)) / 86_400_000;
    expect(days).toBeCloseTo(7, 5);
    const { rows } = await test.db.query(
      'SELECT row_to_json(i)::text AS row, token_hash FROM invitations i WHERE id = $1',
      [created.id],
    );
    expect(rows[0].token_hash).toBe(sha256Hex(created.token));
    expect(rows[0].row).not.toContain(created.token);

    const listed = await test.http().get(INVITATIONS).set(owner.auth).expect(200);
    const mine = listed.body.results.find((invitation: { id: string }) => invitation.id === created.id);
    expect(mine).toEqual({
      id: created.id,
      email,
      role: 'member',
      created_at: created.created_at,
      expires_at: created.expires_at,
    });
    expect(JSON.stringify(listed.body)).not.toContain('inv_');
  });

  it('never keeps the token for an Idempotency-Key replay', async () => {
    const email = nextEmail('replay');
    const send = () =>
      test
        .http()
        .post(INVITATIONS)
        .set(owner.auth)
        .set('Idempotency-Key', `invite-${email}`)
        .send({ email, role: 'member' });
    const first = await send().expect(201);
    expect(first.body.token).toMatch(/^inv_/);
    const replay = await send().expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.token).toBeUndefined();
    expect(replay.body.token_withheld).toMatch(/^The invitation token is shown once/);
    expect(replay.body.id).toBe(first.body.id);
    const { rows } = await test.db.query('SELECT response_body::text AS body FROM idempotency_keys');
    for (const row of rows as { body: string | null }[]) expect(row.body ?? '').not.toContain(first.body.token);
  });

  it('lets the invited user join once, with the role, whatever the case of the e-mail', async () => {
    const guest = await signUp(test, nextEmail('casey'));
    const { token } = await invite(test, owner, guest.email.toUpperCase(), 'viewer');
    const accepted = await test.http().post(ACCEPT).set(guest.auth).send({ token }).expect(200);
    expect(accepted.body).toEqual({ organization_id: organizationId, role: 'viewer' });

    const me = await test.http().get('/auth/users/me/').set(guest.auth).expect(200);
    expect(me.body.organizations).toEqual(
      expect.arrayContaining([{ id: organizationId, name: expect.any(String), role: 'viewer' }]),
    );
    expect(me.body.organizations).toHaveLength(2);
    // Still acting in its own organization until it switches.
    expect(me.body.role).toBe('owner');

    // Used: the contract's 400.
    const again = await test.http().post(ACCEPT).set(guest.auth).send({ token }).expect(400);
    expect(again.body).toEqual(INVITATION_INVALID);
    // Accepted invitations are no longer pending.
    const listed = await test.http().get(INVITATIONS).set(owner.auth).expect(200);
    expect(listed.body.results.map((invitation: { email: string }) => invitation.email)).not.toContain(
      guest.email.toLowerCase(),
    );
  });

  it("refuses another user's JWT with 403, and the invitation stays usable by its own user", async () => {
    const invited = await signUp(test, nextEmail('invited'));
    const intruder = await signUp(test);
    const { token } = await invite(test, owner, invited.email, 'member');
    const refused = await test.http().post(ACCEPT).set(intruder.auth).send({ token }).expect(403);
    expect(refused.body).toEqual(PERMISSION_DENIED);
    await test.http().post(ACCEPT).set(invited.auth).send({ token }).expect(200);
  });

  it('refuses an unknown, malformed, revoked or expired token with the contract message', async () => {
    const guest = await signUp(test, nextEmail('late'));
    for (const token of ['inv_' + 'A'.repeat(32), 'nonsense', 'inv_short']) {
      const response = await test.http().post(ACCEPT).set(guest.auth).send({ token }).expect(400);
      expect(response.body).toEqual(INVITATION_INVALID);
    }

    const revoked = await invite(test, owner, guest.email, 'member');
    await test.http().delete(`${INVITATIONS}${revoked.id}/`).set(owner.auth).expect(204);
    const afterRevoke = await test.http().post(ACCEPT).set(guest.auth).send({ token: revoked.token }).expect(400);
    expect(afterRevoke.body).toEqual(INVITATION_INVALID);

    const expired = await invite(test, owner, guest.email, 'member');
    await test.db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const afterExpiry = await test.http().post(ACCEPT).set(guest.auth).send({ token: expired.token }).expect(400);
    expect(afterExpiry.body).toEqual(INVITATION_INVALID);
    // An expired invitation is no longer pending: the e-mail can be invited again.
    await invite(test, owner, guest.email, 'member');

    const missing = await test.http().post(ACCEPT).set(guest.auth).send({}).expect(400);
    expect(missing.body.fields).toEqual({ token: ['This field is required.'] });
  });

  it('refuses (409) an e-mail that is already a member or already has a pending invitation', async () => {
    const self = await test.http().post(INVITATIONS).set(owner.auth).send({ email: owner.email, role: 'admin' });
    expect(self.status).toBe(409);
    expect(self.body).toEqual({ detail: 'A user with this e-mail is already a member of the organization.' });

    const email = nextEmail('twice');
    await invite(test, owner, email, 'member');
    const twice = await test
      .http()
      .post(INVITATIONS)
      .set(owner.auth)
      .send({ email: email.toUpperCase(), role: 'viewer' });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ detail: 'This e-mail already has a pending invitation to the organization.' });
  });

  it('refuses role owner (400 naming role) and bad fields', async () => {
    const owned = await test
      .http()
      .post(INVITATIONS)
      .set(owner.auth)
      .send({ email: nextEmail(), role: 'owner' })
      .expect(400);
    expect(owned.body.fields).toEqual({
      role: [
        '"owner" is not a valid choice: ownership moves only by POST /v1/organizations/current/transfer-ownership/.',
      ],
    });
    expect(owned.body.detail).toMatch(/^role: /);
    const unknown = await test
      .http()
      .post(INVITATIONS)
      .set(owner.auth)
      .send({ email: nextEmail(), role: 'king' })
      .expect(400);
    expect(unknown.body.fields).toEqual({ role: ['"king" is not a valid choice.'] });
    const badEmail = await test
      .http()
      .post(INVITATIONS)
      .set(owner.auth)
      .send({ email: 'nope', role: 'member' })
      .expect(400);
    expect(badEmail.body.fields).toEqual({ email: ['Enter a valid email address.'] });
    const surrogate = await test
      .http()
      .post(INVITATIONS)
      .set(owner.auth)
      .send({ email: '\uD800', role: 'member' })
      .expect(400);
    expect(surrogate.body.fields).toEqual({ email: ['Surrogate characters are not allowed.'] });
  });

  it("answers 404 for another organization's invitation, and for an id that is not a UUID", async () => {
    const other = await signUp(test);
    const theirs = await invite(test, other, nextEmail(), 'member');
    const response = await test.http().delete(`${INVITATIONS}${theirs.id}/`).set(owner.auth).expect(404);
    expect(response.body).toEqual({ detail: `Invitation "${theirs.id}" not found.` });
    await test.http().delete(`${INVITATIONS}not-a-uuid/`).set(owner.auth).expect(404);
    // Still pending in its own organization.
    const listed = await test.http().get(INVITATIONS).set(other.auth).expect(200);
    expect(listed.body.results.map((invitation: { id: string }) => invitation.id)).toEqual([theirs.id]);
  });

  it('is for admins and the owner: a member gets 403', async () => {
    const member = await addMember(test, owner, 'member');
    const response = await test.http().post(INVITATIONS).set(member.auth).send({ email: nextEmail(), role: 'viewer' });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(PERMISSION_DENIED);
    await test.http().get(INVITATIONS).set(member.auth).expect(403);
    const admin = await addMember(test, owner, 'admin');
    await test.http().post(INVITATIONS).set(admin.auth).send({ email: nextEmail(), role: 'admin' }).expect(201);
  });

  it('holds at most 100 pending invitations per organization (the 101st: 400)', async () => {
    const crowded = await signUp(test);
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          invite(test, crowded, `crowd${batch}-${i}-${Date.now()}@example.com`, 'viewer'),
        ),
      );
    }
    const response = await test.http().post(INVITATIONS).set(crowded.auth).send({ email: nextEmail(), role: 'viewer' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      detail:
        'This organization already has 100 pending invitations, the most it may have; revoke one before inviting another.',
    });
    const listed = await test.http().get(`${INVITATIONS}?limit=1`).set(crowded.auth).expect(200);
    expect(listed.body.count).toBe(100);
  });
});
