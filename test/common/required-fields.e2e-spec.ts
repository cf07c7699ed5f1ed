import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { expectNoStoredChange } from '../support/core.js';
import { createDomain, HANDBOOK, signInAdmin } from '../support/knowledge.js';

type Caller = 'anyone' | 'user' | 'admin';

/** Every required string field of every route, with a body that is valid but for that field. */
const REQUIRED_STRING_FIELDS: [
  method: 'post' | 'patch',
  path: string | ((session: string) => string),
  caller: Caller,
  body: Record<string, unknown>,
  field: string,
][] = [
  ['post', '/auth/users/', 'anyone', { email: 'new@example.com', password: 'a long password' }, 'email'],
  ['post', '/auth/users/', 'anyone', { email: 'new@example.com', password: 'a long password' }, 'password'],
  ['post', '/auth/jwt/create/', 'anyone', { email: 'new@example.com', password: 'a long password' }, 'email'],
  ['post', '/auth/jwt/create/', 'anyone', { email: 'new@example.com', password: 'a long password' }, 'password'],
  ['post', '/auth/jwt/refresh/', 'anyone', { refresh: 'x' }, 'refresh'],
  ['post', '/auth/jwt/verify/', 'anyone', { token: 'x' }, 'token'],
  ['post', '/auth/jwt/logout/', 'anyone', { refresh: 'x' }, 'refresh'],
  ['post', '/v1/billings/api-keys/', 'user', { name: 'ci' }, 'name'],
  ['post', '/v1/documents/', 'user', { title: 'Runbook', content: 'Restart the worker.' }, 'title'],
  ['post', '/v1/documents/', 'user', { title: 'Runbook', content: 'Restart the worker.' }, 'content'],
  ['post', '/v1/query/', 'user', { query: 'How do I rotate a key?', domain: 'handbook' }, 'query'],
  ['patch', (session) => `/v1/chat/sessions/${session}/`, 'user', { title: 'Renamed' }, 'title'],
  [
    'post',
    (session) => `/v1/chat/sessions/${session}/messages/`,
    'user',
    { content: 'How do I rotate a key?' },
    'content',
  ],
  ['post', '/v1/regions/', 'admin', { name: 'Europe', slug: 'eu' }, 'name'],
  ['post', '/v1/regions/', 'admin', { name: 'Europe', slug: 'eu' }, 'slug'],
  ['post', '/v1/domains/', 'admin', { name: 'Physics', slug: 'physics' }, 'name'],
  ['post', '/v1/domains/', 'admin', { name: 'Physics', slug: 'physics' }, 'slug'],
  ['post', '/v1/domains/handbook/documents/', 'admin', { title: 'Note', content: 'Text.' }, 'title'],
  ['post', '/v1/domains/handbook/documents/', 'admin', { title: 'Note', content: 'Text.' }, 'content'],
];

describe('a required string field that is blank is missing', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let admin: { auth: { Authorization: string } };
  let session: string;

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
    admin = await signInAdmin(test);
    await createDomain(test, 'handbook', HANDBOOK);
    session = (await test.http().post('/v1/chat/sessions/').set(alice.auth).send({ domain: 'handbook' }).expect(201))
      .body.id;
  });
  afterAll(() => test.close());

  describe.each(REQUIRED_STRING_FIELDS)('%s %s (%s): %j', (method, path, caller, body, field) => {
    it.each([
      ['empty', ''],
      ['spaces', '   '],
      ['tabs and newlines', '\t\n \r\n'],
      ['missing', undefined],
    ])(`answers 400 "${field}: This field is required." when it is %s, and stores nothing`, async (_, value) => {
      const url = typeof path === 'string' ? path : path(session);
      const auth = caller === 'user' ? alice.auth : caller === 'admin' ? admin.auth : {};
      await expectNoStoredChange(test, async () => {
        const response = await test
          .http()
          [method](url)
          .set(auth)
          .send({ ...body, [field]: value })
          .expect(400);
        expect(response.body).toEqual({
          detail: `${field}: This field is required.`,
          fields: { [field]: ['This field is required.'] },
        });
      });
    });
  });

  it('keeps "may not be blank" for an optional field given blank (an organization rename)', async () => {
    const response = await test
      .http()
      .patch('/v1/organizations/current/')
      .set(alice.auth)
      .send({ name: '  ' })
      .expect(400);
    expect(response.body.detail).toBe('name: This field may not be blank.');
  });
});
