import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { createDomain, creditsUsed, setCredits } from '../support/knowledge.js';

describe('chat sessions', () => {
  let test: TestApp;
  let user: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp();
    await createDomain(test, 'zoo', [
      { title: 'Giraffes', content: 'Giraffes eat acacia leaves and sleep standing up for short periods.' },
      { title: 'Penguins', content: 'Penguins eat krill and fish, and they huddle together to keep warm in winter.' },
    ]);
  });
  afterAll(() => test.close());
  beforeEach(async () => {
    user = await signUp(test);
  });

  async function newSession(owner = user, body: object = { title: 'Zoo questions', domain: 'zoo' }) {
    return (await test.http().post('/v1/chat/sessions/').set(owner.auth).send(body).expect(201)).body;
  }

  it('creates, lists, renames and deletes a session', async () => {
    const session = await newSession();
    expect(session).toEqual({
      id: expect.any(String),
      title: 'Zoo questions',
      domain: 'zoo',
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const listed = await test.http().get('/v1/chat/sessions/').set(user.auth).expect(200);
    expect(listed.body).toEqual({ count: 1, next: null, previous: null, results: [session] });
    const renamed = await test
      .http()
      .patch(`/v1/chat/sessions/${session.id}/`)
      .set(user.auth)
      .send({ title: 'Animals' })
      .expect(200);
    expect(renamed.body.title).toBe('Animals');
    await test.http().delete(`/v1/chat/sessions/${session.id}/`).set(user.auth).expect(204);
    await test.http().get(`/v1/chat/sessions/${session.id}/`).set(user.auth).expect(404);
    const stored = await test.db.query('SELECT count(*)::int AS n FROM chat_sessions WHERE id = $1', [session.id]);
    expect(stored.rows[0].n).toBe(0);
  });

  it('answers a message with sources, stores both messages and spends a credit', async () => {
    const session = await newSession();
    const response = await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({ content: 'What do penguins eat?' })
      .expect(201);
    expect(response.body.user_message).toEqual({
      id: expect.any(String),
      role: 'user',
      content: 'What do penguins eat?',
      sources: [],
      created_at: expect.any(String),
    });
    expect(response.body.assistant_message).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/krill/),
    });
    expect(response.body.assistant_message.sources[0]).toMatchObject({
      title: 'Penguins',
      snippet: expect.any(String),
    });
    expect(await creditsUsed(test, user.id)).toBe(1);
    const detail = await test.http().get(`/v1/chat/sessions/${session.id}/`).set(user.auth).expect(200);
    expect(detail.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(detail.body.messages[1].sources).toEqual(response.body.assistant_message.sources);
  });

  it('keeps the conversation in mind: a follow-up finds what the earlier turn was about', async () => {
    const session = await newSession();
    await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({ content: 'Tell me about giraffes' })
      .expect(201);
    const followUp = await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({ content: 'How do they sleep?' })
      .expect(201);
    expect(followUp.body.assistant_message.sources[0].title).toBe('Giraffes');
  });

  it('works with an API key of the same user', async () => {
    const key = await createKey(test, user);
    const session = await newSession();
    await test.http().get(`/v1/chat/sessions/${session.id}/`).set('X-API-Key', key.key).expect(200);
    await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set('X-API-Key', key.key)
      .send({ content: 'penguins' })
      .expect(201);
  });

  it("hides another user's session behind a 404 on every route", async () => {
    const session = await newSession();
    const stranger = await signUp(test);
    const path = `/v1/chat/sessions/${session.id}/`;
    // The same answer as for a session that never existed: it names only the id the stranger sent.
    await test
      .http()
      .get(path)
      .set(stranger.auth)
      .expect(404, { detail: `Session "${session.id}" not found.` });
    await test.http().patch(path).set(stranger.auth).send({ title: 'mine' }).expect(404);
    await test.http().delete(path).set(stranger.auth).expect(404);
    await test.http().post(`${path}messages/`).set(stranger.auth).send({ content: 'penguins' }).expect(404);
    const listed = await test.http().get('/v1/chat/sessions/').set(stranger.auth).expect(200);
    expect(listed.body.count).toBe(0);
    expect(await creditsUsed(test, stranger.id)).toBe(0);
    const stored = await test.db.query('SELECT title FROM chat_sessions WHERE id = $1', [session.id]);
    expect(stored.rows[0].title).toBe('Zoo questions');
  });

  it('refuses bad input without storing or spending anything', async () => {
    const session = await newSession();
    await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({})
      .expect(400, {
        detail: 'content: This field is required.',
        fields: { content: ['This field is required.'] },
      });
    await test.http().post('/v1/chat/sessions/not-a-uuid/messages/').set(user.auth).send({ content: 'hi' }).expect(404);
    await test.http().post('/v1/chat/sessions/').set(user.auth).send({ domain: 'nope' }).expect(404);
    await test.http().patch(`/v1/chat/sessions/${session.id}/`).set(user.auth).send({ title: '' }).expect(400);
    await setCredits(test, user.id, 0);
    await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({ content: 'penguins' })
      .expect(402);
    const messages = await test.db.query('SELECT count(*)::int AS n FROM chat_messages WHERE session_id = $1', [
      session.id,
    ]);
    expect(messages.rows[0].n).toBe(0);
  });

  it('honours allowed_domains when a session is created and when it is used', async () => {
    const session = await newSession();
    await test.http().patch('/v1/organizations/current/').set(user.auth).send({ allowed_domains: [] }).expect(200);
    await test.http().post('/v1/chat/sessions/').set(user.auth).send({ domain: 'zoo' }).expect(403);
    await test
      .http()
      .post(`/v1/chat/sessions/${session.id}/messages/`)
      .set(user.auth)
      .send({ content: 'penguins' })
      .expect(403, {
        detail: 'Your organization does not have access to this domain.',
      });
  });
});
