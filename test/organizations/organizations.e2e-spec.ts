import { createKey, signUp, startTestApp, type TestApp } from '../support/app.js';
import { createDomain } from '../support/knowledge.js';

describe('organizations', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
    await createDomain(test, 'science', []);
    await createDomain(test, 'history', []);
  });
  afterAll(() => test.close());

  it('creates an unrestricted organization with each new user', async () => {
    const user = await signUp(test, 'ada@example.com');
    const me = await test.http().get('/auth/users/me/').set(user.auth).expect(200);
    const response = await test.http().get('/v1/organizations/current/').set(user.auth).expect(200);
    expect(response.body).toEqual({
      id: me.body.organization_id,
      name: "ada's organization",
      allowed_domains: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
    });
  });

  it('renames and restricts the organization, with a JWT or an API key', async () => {
    const user = await signUp(test);
    const key = await createKey(test, user);
    const renamed = await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ name: '  Acme  ' })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'Acme', allowed_domains: null });
    const restricted = await test
      .http()
      .patch('/v1/organizations/current/')
      .set('X-API-Key', key.key)
      .send({ allowed_domains: ['science', 'science', 'History'] })
      .expect(200);
    expect(restricted.body).toMatchObject({ name: 'Acme', allowed_domains: ['science', 'history'] });
    const stored = await test.db.query('SELECT name, allowed_domains FROM organizations WHERE id = $1', [
      restricted.body.id,
    ]);
    expect(stored.rows[0]).toEqual({ name: 'Acme', allowed_domains: ['science', 'history'] });
    const cleared = await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: null })
      .expect(200);
    expect(cleared.body.allowed_domains).toBeNull();
  });

  it.each([
    [{ allowed_domains: ['science', 'astrology'] }, 'allowed_domains: Unknown domain: astrology.'],
    [{ allowed_domains: 'science' }, 'allowed_domains: Expected a list of domain slugs, or null for no restriction.'],
    [{ allowed_domains: [1] }, 'allowed_domains: Each entry must be a domain slug.'],
    [{ name: '' }, 'name: This field may not be blank.'],
    [{ name: 'x'.repeat(101) }, 'name: Ensure this field has no more than 100 characters.'],
  ])('refuses %j with a 400 and changes nothing', async (body, detail) => {
    const user = await signUp(test);
    const before = await test.http().get('/v1/organizations/current/').set(user.auth).expect(200);
    const response = await test.http().patch('/v1/organizations/current/').set(user.auth).send(body).expect(400);
    expect(response.body.detail).toBe(detail);
    const after = await test.http().get('/v1/organizations/current/').set(user.auth).expect(200);
    expect(after.body).toEqual(before.body);
  });

  it('clips the unknown slugs it names: five of 150,000 characters came back whole, twice (a 1.5 MB 400)', async () => {
    const user = await signUp(test);
    const slugs = ['a', 'b', 'c', 'd', 'e'].map((letter) => letter + 'x'.repeat(150_000));
    const response = await test
      .http()
      .patch('/v1/organizations/current/')
      .set(user.auth)
      .send({ allowed_domains: slugs })
      .expect(400);
    const shown = ['a', 'b', 'c', 'd', 'e'].map((letter) => `${letter}${'x'.repeat(63)}…`).join(', ');
    expect(response.body).toEqual({
      detail: `allowed_domains: Unknown domain: ${shown}.`,
      fields: { allowed_domains: [`Unknown domain: ${shown}.`] },
    });
  });

  it('requires credentials', async () => {
    await test.http().get('/v1/organizations/current/').expect(401);
  });
});
