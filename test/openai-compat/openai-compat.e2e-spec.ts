import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { collectText, createDomain, creditsUsed, organizationIdOf, setCredits } from '../support/knowledge.js';

const PENGUINS = { title: 'Penguins', content: 'Penguins eat krill and small fish. They hunt in cold southern seas.' };
const ask = (model: string, content = 'What do penguins eat?') => ({
  model,
  messages: [
    { role: 'system' as const, content: 'You are a helpful assistant.' },
    { role: 'user' as const, content },
  ],
});

/** The official client, as an integrator points it at the service. */
const clientFor = (test: TestApp, apiKey: string) => new OpenAI({ baseURL: `${test.url}/v1`, apiKey, maxRetries: 0 });

/** The error a call fails with (the test fails if it succeeds). */
const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
  );

describe('OpenAI-compatible answers (/v1/chat/completions, /v1/models)', () => {
  let test: TestApp;
  let user: SignedInUser;
  let key: string;
  let openai: OpenAI;

  beforeAll(async () => {
    test = await startTestApp();
    await createDomain(test, 'zoo', [PENGUINS]);
    await createDomain(test, 'secret-lab', [{ title: 'Lab', content: 'Penguins are studied in the lab.' }]);
  });
  afterAll(() => test.close());
  beforeEach(async () => {
    user = await signUp(test);
    key = (await createKey(test, user)).key;
    openai = clientFor(test, key);
  });

  const ledger = async () =>
    (await test.db.query('SELECT operation, domain, credits FROM usage_events WHERE user_id = $1', [user.id])).rows;

  describe('GET /v1/models', () => {
    it('lists private and the public domains the organization may ask, in OpenAI format', async () => {
      const models = [];
      for await (const model of openai.models.list()) models.push(model);
      expect(models.map((model) => model.id)).toEqual(['private', 'secret-lab', 'zoo']);
      expect(models[0]).toEqual({
        id: 'private',
        object: 'model',
        created: expect.any(Number),
        owned_by: 'organization',
      });
      expect(models[2]).toEqual({ id: 'zoo', object: 'model', created: expect.any(Number), owned_by: 'public' });
      expect(Math.abs(models[0].created - Date.now() / 1000)).toBeLessThan(600);
    });

    it('leaves out the domains outside allowed_domains', async () => {
      await test.db.query(`UPDATE organizations SET allowed_domains = '["zoo"]' WHERE id = $1`, [
        await organizationIdOf(test, user.id),
      ]);
      const response = await test.http().get('/v1/models').set('Authorization', `Bearer ${key}`).expect(200);
      expect(response.body).toEqual({
        object: 'list',
        data: [expect.objectContaining({ id: 'private' }), expect.objectContaining({ id: 'zoo' })],
      });
      await expect(openai.models.retrieve('secret-lab')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('retrieves one model', async () => {
      expect(await openai.models.retrieve('zoo')).toMatchObject({ id: 'zoo', object: 'model', owned_by: 'public' });
    });
  });

  describe('POST /v1/chat/completions', () => {
    it('answers from a public domain with an API key, in OpenAI shape with sources, costing a credit', async () => {
      const completion = await openai.chat.completions.create(ask('zoo'));
      expect(completion).toMatchObject({
        id: expect.stringMatching(/^chatcmpl-/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: 'zoo',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: expect.stringContaining('krill') },
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: expect.any(Number),
          completion_tokens: expect.any(Number),
          total_tokens: expect.any(Number),
        },
      });
      const { sources } = completion as unknown as { sources: { title: string; score: number }[] };
      expect(sources[0]).toMatchObject({ title: 'Penguins', score: expect.any(Number) });
      expect(await creditsUsed(test, user.id)).toBe(1);
      expect(await ledger()).toEqual([{ operation: 'chat_completion', domain: 'zoo', credits: 1 }]);
    });

    it("answers from the organization's private documents with a JWT, and sends the credit headers", async () => {
      await test.http().post('/v1/documents/').set(user.auth).send(PENGUINS).expect(201);
      const jwtClient = clientFor(test, user.access);
      const { data, response } = await jwtClient.chat.completions.create(ask('private')).withResponse();
      expect(data.choices[0].message.content).toContain('krill');
      expect(response.headers.get('x-credits-remaining')).toBe('999');
      expect(await ledger()).toEqual([{ operation: 'chat_completion', domain: null, credits: 1 }]);
    });

    it('streams chat.completion.chunk events, the sources on the last one, then [DONE]', async () => {
      const whole = await openai.chat.completions.create(ask('zoo'));
      const stream = await openai.chat.completions.create({ ...ask('zoo'), stream: true });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(new Set(chunks.map((chunk) => `${chunk.object} ${chunk.id}`)).size).toBe(1);
      expect(chunks[0].object).toBe('chat.completion.chunk');
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe(
        whole.choices[0].message.content,
      );
      const last = chunks.at(-1) as unknown as { choices: { finish_reason: string }[]; sources: { title: string }[] };
      expect(last.choices[0].finish_reason).toBe('stop');
      expect(last.sources[0].title).toBe('Penguins');
      expect(await creditsUsed(test, user.id)).toBe(2);

      const raw = await test
        .http()
        .post('/v1/chat/completions')
        .set(user.auth)
        .send({ ...ask('zoo'), stream: true })
        .buffer(true)
        .parse(collectText)
        .expect(200)
        .expect('content-type', 'text/event-stream');
      expect(raw.body).toMatch(/^data: \{"id":"chatcmpl-/);
      expect(raw.body.endsWith('data: [DONE]\n\n')).toBe(true);
    });

    it('reports a bad key as the client’s AuthenticationError, with this service’s detail', async () => {
      const error = await failureOf(clientFor(test, 'svc_not-a-real-key').chat.completions.create(ask('zoo')));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error.status).toBe(401);
      expect(error.type).toBe('authentication_error');
      expect(error.message).toBe('401 Invalid or expired API key. Check that the key is active and has not expired.');
    });

    it('reports an exhausted quota as an APIError with status 402, charging nothing', async () => {
      await setCredits(test, user.id, 1, 1);
      const error = await failureOf(openai.chat.completions.create(ask('zoo')));
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBe(402);
      expect(error.code).toBe('quota_exhausted');
      expect(error.type).toBe('insufficient_quota');
      expect(await ledger()).toEqual([]);
    });

    it('reports an unknown model as the client’s NotFoundError', async () => {
      const error = await failureOf(openai.chat.completions.create(ask('no-such-domain')));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe('model_not_found');
      expect(await creditsUsed(test, user.id)).toBe(0);
    });

    it('answers a domain outside allowed_domains with 403 in both shapes', async () => {
      await test.db.query(`UPDATE organizations SET allowed_domains = '[]' WHERE id = $1`, [
        await organizationIdOf(test, user.id),
      ]);
      const error = await failureOf(openai.chat.completions.create(ask('zoo')));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.message).toBe('403 Your organization does not have access to this domain.');
    });
  });

  describe('bad input', () => {
    const post = (body: unknown) =>
      test
        .http()
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${key}`)
        .send(body as object);
    const refused = (field: string, message: string) => ({
      detail: `${field}: ${message}`,
      fields: { [field]: [message] },
      error: { message: `${field}: ${message}`, type: 'invalid_request_error', code: 'invalid_value', param: field },
    });

    it.each([
      ['no messages field', { model: 'zoo' }, 'messages', 'This field is required.'],
      ['an empty list of messages', { model: 'zoo', messages: [] }, 'messages', 'This list may not be empty.'],
      [
        'a message without content',
        { model: 'zoo', messages: [{ role: 'user' }] },
        'messages.0.content',
        'This field is required.',
      ],
      [
        'a message with null content',
        {
          model: 'zoo',
          messages: [
            { role: 'system', content: 'Hi.' },
            { role: 'user', content: null },
          ],
        },
        'messages.1.content',
        'This field is required.',
      ],
      [
        'an unknown role',
        {
          model: 'zoo',
          messages: [
            { role: 'robot', content: 'Hi' },
            { role: 'user', content: 'Penguins?' },
          ],
        },
        'messages.0.role',
        '"robot" is not a valid choice.',
      ],
      [
        'no user message',
        { model: 'zoo', messages: [{ role: 'system', content: 'Be brief.' }] },
        'messages',
        'Include at least one message with the role "user": its last one is the question.',
      ],
      ['stream not a boolean', { ...ask('zoo'), stream: 'yes' }, 'stream', 'Must be a valid boolean.'],
      [
        '1,000 messages',
        { model: 'zoo', messages: Array.from({ length: 1000 }, () => ({ role: 'user', content: 'Penguins?' })) },
        'messages',
        'Ensure this field has no more than 100 elements.',
      ],
      ['no model', { messages: ask('zoo').messages }, 'model', 'This field is required.'],
    ])('refuses %s with 400 naming the field, in both shapes', async (_case, body, field, message) => {
      const response = await post(body).expect(400);
      expect(response.body).toEqual(refused(field, message));
      expect(await creditsUsed(test, user.id)).toBe(0);
    });

    it('answers an unknown model with 404 in both shapes', async () => {
      const response = await post(ask('atlantis')).expect(404);
      expect(response.body).toEqual({
        detail: 'Model "atlantis" not found.',
        error: {
          message: 'Model "atlantis" not found.',
          type: 'not_found_error',
          code: 'model_not_found',
          param: null,
        },
      });
    });

    it('accepts 100 messages, OpenAI fields it ignores, and text parts', async () => {
      const messages = Array.from({ length: 99 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: 'Penguins?',
      }));
      await post({
        model: 'zoo',
        messages: [...messages, { role: 'user', content: [{ type: 'text', text: 'What do penguins eat?' }] }],
        max_tokens: 50,
        temperature: 0.3,
        top_p: 1,
        n: 1,
        user: 'someone',
      }).expect(200);
    });

    it('keeps other routes’ errors free of the OpenAI object', async () => {
      const response = await test.http().post('/v1/query/').set('Authorization', `Bearer ${key}`).send({}).expect(400);
      expect(response.body.error).toBeUndefined();
    });
  });
});

describe('OpenAI-compatible answers written by the upstream model (LLM_BASE_URL)', () => {
  let test: TestApp;
  let upstream: Server;
  const received: { messages: { role: string; content: string }[] }[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push(JSON.parse(body));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Feed them krill [1].' } }] }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    test = await startTestApp({ LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, LLM_MODEL: 'tiny' });
    await createDomain(test, 'zoo', [PENGUINS]);
  });
  afterAll(async () => {
    await test.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it("returns the model's answer, grounded in the passages, with the earlier turns as history", async () => {
    const user = await signUp(test);
    const openai = clientFor(test, (await createKey(test, user)).key);
    const completion = await openai.chat.completions.create({
      model: 'zoo',
      messages: [
        { role: 'user', content: 'Tell me about penguins.' },
        { role: 'assistant', content: 'They live in the south.' },
        { role: 'user', content: 'What do penguins eat?' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Feed them krill [1].');
    const sent = received.at(-1)!.messages;
    expect(sent.slice(1, 3)).toEqual([
      { role: 'user', content: 'Tell me about penguins.' },
      { role: 'assistant', content: 'They live in the south.' },
    ]);
    expect(sent.at(-1)!.content).toContain('Penguins eat krill and small fish.');

    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await openai.chat.completions.create({ ...ask('zoo'), stream: true })) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('Feed them krill [1].');
    expect(await creditsUsed(test, user.id)).toBe(2);
  });
});
