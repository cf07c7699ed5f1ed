import { jest } from '@jest/globals';
import { Bm25Retriever } from '../../src/retrieval/bm25.retriever.js';
import { ACTIVE_MS, MAX_REST_MS, SearchGate } from '../../src/retrieval/search-gate.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { createDomain, creditsUsed } from '../support/knowledge.js';

/** A search that runs until the test ends it. */
function pending() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SearchGate in the running service: any request of another organization leaves it a core', () => {
  let test: TestApp;
  let gate: SearchGate;
  let flooder: string;
  let flooderOwner: SignedInUser;
  let reader: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ SEARCHES_AT_ONCE: '2' });
    gate = test.app.get(SearchGate);
    reader = await signUp(test);
  });
  afterAll(() => test.close());

  // A new flooder for each test: the rest a test's searches leave owed depends on how long they took on
  // a busy machine (a slow tick in CI left one owing past the allowance), and must not reach the next test.
  beforeEach(async () => {
    flooderOwner = await signUp(test);
    flooder = (await test.http().get('/v1/organizations/current/').set(flooderOwner.auth).expect(200)).body.id;
  });

  /** How many of two searches of the flooder's start at once on the service's gate. */
  async function flooderStartsTwo(): Promise<number> {
    const searches = [pending(), pending()];
    let started = 0;
    const runs = searches.map((search) =>
      gate.run(flooder, () => {
        started++;
        return search.done;
      }),
    );
    await settle();
    const atOnce = started;
    for (const search of searches) search.finish();
    await Promise.all(runs);
    return atOnce;
  }

  it('runs two of the flooder at once while no other organization has been seen for ACTIVE_MS', async () => {
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_MS + 50));
    expect(await flooderStartsTwo()).toBe(2);
  });

  it("runs one at a time for ACTIVE_MS after another organization's GET /v1/documents/", async () => {
    await test.http().get('/v1/documents/?limit=1').set(reader.auth).expect(200);
    expect(await flooderStartsTwo()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_MS + 50));
    expect(await flooderStartsTwo()).toBe(2);
  });

  it('rests the flooder after a search four times as long as it took, less the 250 ms it may owe, while another organization reads (SEARCH_TURN_SHARE_PERCENT 20, SEARCH_REST_ALLOWANCE_MS 250 by default)', async () => {
    await test.http().get('/v1/documents/?limit=1').set(reader.auth).expect(200);
    // On the gate's clock (performance.now): Date.now's whole milliseconds, four times over, were off
    // by more than the test's 1 ms of slack.
    const times: Record<string, number> = {};
    let rest = 0;
    let restTimerFired!: Promise<number>;
    const first = gate.run(flooder, async () => {
      times.firstStarted = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 150));
      times.firstEnded = performance.now();
      // d × (100 − 20) / 20 owed (at most MAX_REST_MS), four times as long as the search took; what
      // exceeds 250 ms is waited out.
      rest = Math.min(((times.firstEnded - times.firstStarted) * 80) / 20, MAX_REST_MS) - 250;
      // A timer for the rest, armed as the gate arms its own: on a busy machine both fire equally late
      // (give or take one turn of the event loop; not resting the 250 ms would be 250 ms late).
      restTimerFired = new Promise((resolve) => setTimeout(() => resolve(performance.now()), rest));
    });
    const second = gate.run(flooder, () => {
      times.secondStarted = performance.now();
      return Promise.resolve();
    });
    await Promise.all([first, second]);
    expect(times.secondStarted - times.firstEnded).toBeGreaterThanOrEqual(rest - 1);
    expect(times.secondStarted - (await restTimerFired)).toBeLessThan(150);
  });

  /**
   * Sends `body` to `path` as the flooder while both its turns are taken, hangs up after 300 ms, then
   * frees the turns and gives a search that wrongly stayed in line time to run.
   */
  async function hangUpWhileTurnsTaken(path: string, body: object): Promise<void> {
    const held = [pending(), pending()];
    const holding = held.map((search) => gate.run(flooder, () => search.done));
    await settle();
    const hungUp = fetch(`${test.url}${path}`, {
      method: 'POST',
      headers: { ...flooderOwner.auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(300),
    }).catch((error: unknown) => (error as Error).name);
    expect(await hungUp).toBe('TimeoutError');
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const search of held) search.finish();
    await Promise.all(holding);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  it('never runs a search whose client hung up while it waited for a turn', async () => {
    const retriever = test.app.get(Bm25Retriever);
    const searched = jest.spyOn(retriever, 'search');
    try {
      await hangUpWhileTurnsTaken('/v1/search/', { query: 'anything at all' });
      expect(searched).not.toHaveBeenCalled();
      // The next search of the organization runs as usual.
      await test.http().post('/v1/search/').set(flooderOwner.auth).send({ query: 'anything at all' }).expect(200);
      expect(searched).toHaveBeenCalledTimes(1);
    } finally {
      searched.mockRestore();
    }
  });

  it('never runs, charges or stores a chat message whose client hung up while its search waited', async () => {
    await createDomain(test, 'gate-chat', [{ title: 'Otters', content: 'Otters hold hands while they sleep.' }]);
    const session = (
      await test.http().post('/v1/chat/sessions/').set(flooderOwner.auth).send({ domain: 'gate-chat' }).expect(201)
    ).body;
    const creditsBefore = await creditsUsed(test, flooderOwner.id);
    const retriever = test.app.get(Bm25Retriever);
    const searched = jest.spyOn(retriever, 'retrieve');
    try {
      await hangUpWhileTurnsTaken(`/v1/chat/sessions/${session.id}/messages/`, { content: 'Do otters sleep?' });
      expect(searched).not.toHaveBeenCalled();
      expect(await creditsUsed(test, flooderOwner.id)).toBe(creditsBefore);
      const stored = await test.db.query('SELECT count(*)::int AS n FROM chat_messages WHERE session_id = $1', [
        session.id,
      ]);
      expect(stored.rows[0].n).toBe(0);
      // The next message is answered as usual.
      await test
        .http()
        .post(`/v1/chat/sessions/${session.id}/messages/`)
        .set(flooderOwner.auth)
        .send({ content: 'Do otters sleep?' })
        .expect(201);
      expect(searched).toHaveBeenCalled();
    } finally {
      searched.mockRestore();
    }
  });
});
