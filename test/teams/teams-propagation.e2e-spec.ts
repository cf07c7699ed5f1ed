import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { bearer } from '../support/api-keys.js';
import { sleep } from '../support/core.js';
import { addMember, MEMBERS, PERMISSION_DENIED } from '../support/teams.js';

/** Polls `probe` on instance B until it answers `status`; answers how long that took, in ms. */
async function msUntil(probe: () => Promise<{ status: number }>, status: number, limitMs = 3000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if ((await probe()).status === status) return Date.now() - started;
    await sleep(10);
  }
  return Infinity;
}

describe('teams: a role change, a removal or a leave reaches every instance within a second', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: SignedInUser;
  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({}, a.database);
    owner = await signUp(a);
    // Both instances listen (LISTEN membership_changed) before the tests start.
    await sleep(500);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const userIdOf = async (user: SignedInUser) => (await a.http().get('/auth/users/me/').set(user.auth)).body.id;

  it("narrows a demoted member's tokens and keys on the other instance", async () => {
    const member = await addMember(a, owner, 'member');
    const key = await createKey(a, member);
    const upload = () => b.http().post('/v1/documents/').set(bearer(key.key)).send({ title: 't', content: 'c' });
    const uploadByToken = () => b.http().post('/v1/documents/').set(member.auth).send({ title: 't', content: 'c' });
    // B has cached the member's role and key.
    expect((await upload()).status).toBe(201);
    expect((await uploadByToken()).status).toBe(201);

    await a
      .http()
      .patch(`${MEMBERS}${await userIdOf(member)}/`)
      .set(owner.auth)
      .send({ role: 'viewer' })
      .expect(200);
    const keyMs = await msUntil(upload, 403);
    const tokenMs = await msUntil(uploadByToken, 403);
    expect(keyMs).toBeLessThan(1000);
    expect(tokenMs).toBeLessThan(1000);
    const refused = await upload();
    expect(refused.body).toEqual(PERMISSION_DENIED);
    // Reading is still allowed.
    await b.http().get('/v1/documents/').set(bearer(key.key)).expect(200);
  });

  it("stops a removed member's tokens and revokes its keys on the other instance", async () => {
    const member = await addMember(a, owner, 'admin');
    const key = await createKey(a, member);
    const byKey = () => b.http().get('/v1/organizations/current/').set(bearer(key.key));
    const byToken = () => b.http().get('/v1/organizations/current/').set(member.auth);
    expect((await byKey()).status).toBe(200);
    expect((await byToken()).status).toBe(200);

    await a
      .http()
      .delete(`${MEMBERS}${await userIdOf(member)}/`)
      .set(owner.auth)
      .expect(204);
    expect(await msUntil(byKey, 401)).toBeLessThan(1000);
    expect(await msUntil(byToken, 401)).toBeLessThan(1000);
  });

  it('stops the tokens of a member who left, on the other instance', async () => {
    const member = await addMember(a, owner, 'member');
    const byToken = () => b.http().get(MEMBERS).set(member.auth);
    expect((await byToken()).status).toBe(200);
    await a
      .http()
      .delete(`${MEMBERS}${await userIdOf(member)}/`)
      .set(member.auth)
      .expect(204);
    expect(await msUntil(byToken, 401)).toBeLessThan(1000);
  });

  it('measures a removal reaching the second instance (p99 over 20 tries under 1 s)', async () => {
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const member = await addMember(a, owner, 'viewer');
      const byToken = () => b.http().get('/auth/users/me/').set(member.auth);
      expect((await byToken()).status).toBe(200);
      await a
        .http()
        .delete(`${MEMBERS}${await userIdOf(member)}/`)
        .set(owner.auth)
        .expect(204);
      delays.push(await msUntil(byToken, 401));
    }
    delays.sort((x, y) => x - y);
    const p99 = delays[Math.ceil(delays.length * 0.99) - 1];
    if (process.env.TEAMS_FIGURES) console.log(`removal reaches instance B: median ${delays[10]} ms, p99 ${p99} ms`);
    expect(p99).toBeLessThan(1000);
  }, 60_000);
});
