import { createServer, type IncomingMessage, type Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { until } from '../support/core.js';
import { collectText, createDomain, creditsUsed } from '../support/knowledge.js';

type Mode = 'ok' | 'fail' | 'hang' | 'garbage';

/** A stand-in for an OpenAI-compatible server, on loopback. */
async function startFakeModel(): Promise<{
  url: string;
  mode: Mode;
  requests: any[];
  /** When the service hung up on a request it was still waiting on (its client went away, or it timed out). */
  abandoned: number[];
  close(): Promise<void>;
}> {
  const state = { mode: 'ok' as Mode, requests: [] as any[], abandoned: [] as number[] };
  const hanging: IncomingMessage[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      state.requests.push({ path: request.url, authorization: request.headers.authorization, body: JSON.parse(body) });
      if (state.mode === 'hang') {
        response.once('close', () => state.abandoned.push(Date.now()));
        return void hanging.push(request);
      }
      if (state.mode === 'fail') {
        response.writeHead(500, { 'content-type': 'text/plain' });
        return void response.end('upstream exploded: secret-internal-detail');
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      if (state.mode === 'garbage') return void response.end('{"choices": "no"');
      response.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Feed them krill [1].' } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get mode() {
      return state.mode;
    },
    set mode(mode: Mode) {
      state.mode = mode;
    },
    requests: state.requests,
    abandoned: state.abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Long enough that a hang-up stopped "at once" is told apart from one stopped by the timeout on a busy machine. */
const LLM_TIMEOUT_MS = 2_000;

describe('the model answerer (LLM_BASE_URL)', () => {
  let model: Awaited<ReturnType<typeof startFakeModel>>;
  let test: TestApp;
  let user: SignedInUser;
  const ask = (body: object = { query: 'What do penguins eat?', domain: 'zoo' }) =>
    test.http().post('/v1/query/').set(user.auth).send(body);

  beforeAll(async () => {
    model = await startFakeModel();
    test = await startTestApp({
      LLM_BASE_URL: model.url,
      LLM_API_KEY: 'sk-test-upstream',
      LLM_MODEL: 'tiny',
      LLM_TIMEOUT_MS: String(LLM_TIMEOUT_MS),
    });
    await createDomain(test, 'zoo', [{ title: 'Penguins', content: 'Penguins eat krill and small fish.' }]);
  });
  afterAll(async () => {
    await test.close();
    await model.close();
  });
  beforeEach(async () => {
    model.mode = 'ok';
    model.requests.length = 0;
    model.abandoned.length = 0;
    user = await signUp(test);
  });

  it("sends the question with the retrieved passages and returns the model's answer", async () => {
    const response = await ask().expect(200);
    expect(response.body.answer).toBe('Feed them krill [1].');
    expect(response.body.sources[0].title).toBe('Penguins');
    const [sent] = model.requests;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.authorization).toBe('Bearer sk-test-upstream');
    expect(sent.body.model).toBe('tiny');
    expect(sent.body.messages.at(-1).content).toContain('Penguins eat krill and small fish.');
    expect(sent.body.messages.at(-1).content).toContain('What do penguins eat?');
    expect(await creditsUsed(test, user.id)).toBe(1);
  });

  it.each<[Mode]>([['fail'], ['garbage']])(
    'answers a generic transient 500 when the model %s, and costs nothing',
    async (mode) => {
      model.mode = mode;
      const response = await ask().expect(500);
      expect(response.body).toEqual({
        detail: expect.stringMatching(/transient/),
        request_id: response.headers['x-request-id'],
      });
      expect(JSON.stringify(response.body)).not.toContain('secret-internal-detail');
      expect(await creditsUsed(test, user.id)).toBe(0);
      const ledger = await test.db.query('SELECT count(*)::int AS n FROM usage_events WHERE user_id = $1', [user.id]);
      expect(ledger.rows[0].n).toBe(0);
    },
  );

  it('sends the passages as the extractive answerer reads them: no Markdown markers, no rows of links', async () => {
    await createDomain(test, 'zoo-notes', [
      {
        title: 'Feeding notes',
        content:
          'Home | Animals | Contact\n\n## Diet\n\n- **Seals** eat [squid](https://example.com/squid) and fish.\n- Keepers feed them at `noon`.',
      },
    ]);
    await ask({ query: 'What do seals eat?', domain: 'zoo-notes' }).expect(200);
    const sent = model.requests[0].body.messages.at(-1).content as string;
    expect(sent).toContain('[1] Feeding notes\nSeals eat squid and fish.\nKeepers feed them at noon.');
    expect(sent).not.toMatch(/\*\*|\]\(|## |Home \|/);
  });

  it('gives up on a hanging model after LLM_TIMEOUT_MS with a 500, and costs nothing', async () => {
    model.mode = 'hang';
    const started = Date.now();
    await ask().expect(500);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(LLM_TIMEOUT_MS - 5);
    expect(took).toBeLessThan(LLM_TIMEOUT_MS + 3_000);
    expect(await creditsUsed(test, user.id)).toBe(0);
  });

  it('reports a failure during a stream as an error event and refunds the credit', async () => {
    model.mode = 'fail';
    const response = await ask({ query: 'What do penguins eat?', domain: 'zoo', stream: true })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    const body = response.body as string;
    expect(body).toMatch(/^event: sources\n/);
    expect(body).toContain(
      'event: error\ndata: {"detail":"The answer could not be completed. It is transient: retry with exponential back-off."}',
    );
    expect(body).not.toContain('secret-internal-detail');
    expect(await creditsUsed(test, user.id)).toBe(0);
  });

  it('stops the model call at once when a streaming client hangs up, and charges nothing', async () => {
    model.mode = 'hang';
    const hungUpAt = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${test.url}/v1/query/`, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
      });
      request.on('response', (response) => {
        response.once('data', () => {
          // The sources event has arrived and the model has been asked: hang up, well before LLM_TIMEOUT_MS.
          setTimeout(() => {
            request.destroy();
            resolve(Date.now());
          }, 50);
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.end(JSON.stringify({ query: 'What do penguins eat?', domain: 'zoo', stream: true }));
    });
    await until(() => model.abandoned.length === 1, LLM_TIMEOUT_MS + 2_000);
    // Stopped by the hang-up, not by LLM_TIMEOUT_MS (given a second for a busy machine).
    expect(model.abandoned[0] - hungUpAt).toBeLessThan(LLM_TIMEOUT_MS / 2);
    // The credit was taken before the model was asked, and is given back once the call is stopped.
    await until(async () => (await creditsUsed(test, user.id)) === 0, 2_000);
    const ledger = await test.db.query('SELECT 1 FROM usage_events WHERE user_id = $1', [user.id]);
    expect(ledger.rowCount).toBe(0);
  });

  it('does not call the model when nothing was found', async () => {
    const response = await ask({ query: 'the of and', domain: 'zoo' }).expect(200);
    expect(response.body.sources).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });
});

describe('a streamed query whose client hangs up, when searches cost credits', () => {
  let model: Awaited<ReturnType<typeof startFakeModel>>;
  let test: TestApp;
  let user: SignedInUser;

  beforeAll(async () => {
    model = await startFakeModel();
    test = await startTestApp({
      LLM_BASE_URL: model.url,
      LLM_MODEL: 'tiny',
      LLM_TIMEOUT_MS: '2000',
      SEARCH_CREDIT_COST: '1',
      QUERY_CREDIT_COST: '3',
    });
    await createDomain(test, 'zoo', [{ title: 'Penguins', content: 'Penguins eat krill and small fish.' }]);
  });
  afterAll(async () => {
    await test.close();
    await model.close();
  });
  beforeEach(async () => {
    model.mode = 'ok';
    model.abandoned.length = 0;
    user = await signUp(test);
  });

  it('pays for the search once the sources event arrived (SEARCH_CREDIT_COST), and gets the rest back', async () => {
    model.mode = 'hang';
    let received = '';
    await new Promise<void>((resolve, reject) => {
      const request = httpRequest(`${test.url}/v1/query/`, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
      });
      request.on('response', (response) => {
        response.once('data', (chunk: Buffer) => {
          received = chunk.toString();
          // The sources are in: hang up before any of the answer.
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.end(JSON.stringify({ query: 'What do penguins eat?', domain: 'zoo', stream: true }));
    });
    expect(received).toMatch(/^event: sources\ndata: \{"sources":\[\{.*"title":"Penguins"/);
    await until(() => model.abandoned.length === 1, 2_000);
    await until(async () => (await creditsUsed(test, user.id)) === 1, 2_000);
    const ledger = await test.db.query('SELECT operation, credits FROM usage_events WHERE user_id = $1', [user.id]);
    expect(ledger.rows).toEqual([{ operation: 'query', credits: 1 }]);
    // What the key or user sees: the subscription says 1 used.
    const subscription = await test.http().get('/v1/billings/subscription/').set(user.auth).expect(200);
    expect(subscription.body.current_quota.credits_used).toBe(1);
  });

  it('still gives everything back when the answer fails on our side after the sources', async () => {
    model.mode = 'fail';
    const response = await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'What do penguins eat?', domain: 'zoo', stream: true })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    expect(response.body as string).toMatch(/^event: sources\n/);
    expect(response.body as string).toContain('event: error\n');
    expect(await creditsUsed(test, user.id)).toBe(0);
  });

  it('charges the whole query when it completes', async () => {
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'What do penguins eat?', domain: 'zoo', stream: true })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    expect(await creditsUsed(test, user.id)).toBe(3);
  });
});
