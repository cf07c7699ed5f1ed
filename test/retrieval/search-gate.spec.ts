import { jest } from '@jest/globals';
import { SearchesBusyError } from '../../src/common/errors.js';
import {
  ACTIVE_MS,
  HOLDS_TO_BE_HEAVY,
  MAX_REST_MS,
  SearchGate,
  type SearchGateLimits,
} from '../../src/retrieval/search-gate.js';

/** A search that runs until the test ends it. */
function pending() {
  let finish!: (value: string) => void;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return { done, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
/** Real time: the gate's wake-up after a rest is a real timer. */
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gate's clock (performance.now()) under the test's control: how long an organization counts as active, rests. */
let clock = 1_000_000;
beforeEach(() => {
  clock = 1_000_000;
  jest.spyOn(performance, 'now').mockImplementation(() => clock);
});
afterEach(() => jest.restoreAllMocks());

/** A gate, and searches on it that record when they start and run until finished by name. */
function harness(limits: Partial<SearchGateLimits>) {
  const gate = new SearchGate({
    SEARCHES_AT_ONCE: 100,
    SEARCHES_PER_ORGANIZATION: 100,
    SEARCH_QUEUE_PER_ORGANIZATION: 1000,
    SEARCH_QUEUE_TOTAL: 100_000,
    SEARCH_TURN_SHARE_PERCENT: 100,
    SEARCH_REST_ALLOWANCE_MS: 0,
    ...limits,
  });
  const started: string[] = [];
  const works = new Map<string, ReturnType<typeof pending>>();
  const answers: Promise<unknown>[] = [];
  const search = (organization: string, name: string) => {
    const work = pending();
    works.set(name, work);
    const answer = gate.run(organization, () => {
      started.push(name);
      return work.done;
    });
    answers.push(answer.catch((error: unknown) => error));
  };
  const finish = async (...names: string[]) => {
    for (const name of names) works.get(name)!.finish(name);
    await settle();
  };
  return { gate, started, search, finish, all: () => Promise.all(answers) };
}

describe('SearchGate (SEARCHES_PER_ORGANIZATION, SEARCH_QUEUE_PER_ORGANIZATION)', () => {
  const limits = { SEARCHES_PER_ORGANIZATION: 2, SEARCH_QUEUE_PER_ORGANIZATION: 1 };

  it('runs at most the limit of one organization at once, queues one more, and refuses the next with 429', async () => {
    const { gate, started, search, finish, all } = harness(limits);
    for (const name of ['a', 'b', 'c']) search('org-1', name);
    await settle();
    expect(started).toEqual(['a', 'b']);

    const refused = await gate.run('org-1', () => Promise.resolve('d')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SearchesBusyError);
    expect((refused as SearchesBusyError).status).toBe(429);
    expect((refused as SearchesBusyError).headers['Retry-After']).toBe('1');
    expect((refused as SearchesBusyError).message).toBe(
      'Too many searches from your organization at once (2 run at a time); retry in a second.',
    );

    // Another organization is not held back by the first one's searches.
    await expect(gate.run('org-2', () => Promise.resolve('other'))).resolves.toBe('other');

    await finish('a');
    expect(started).toEqual(['a', 'b', 'c']);
    await finish('b', 'c');
    await expect(all()).resolves.toEqual(['a', 'b', 'c']);
  });

  it('gives the turn of a search that fails to the next, and forgets an organization with none left', async () => {
    const { gate } = harness(limits);
    await expect(gate.run('org-1', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const [a, b] = [pending(), pending()];
    const runs = [gate.run('org-1', () => a.done), gate.run('org-1', () => b.done)];
    a.finish('a');
    b.finish('b');
    await expect(Promise.all(runs)).resolves.toEqual(['a', 'b']);
    const inside = gate as unknown as { lanes: Map<string, unknown>; line: string[]; running: number };
    expect([inside.lanes.size, inside.line.length, inside.running]).toEqual([0, 0, 0]);
  });
});

describe('SearchGate (SEARCHES_AT_ONCE): fair turns between organizations', () => {
  it("runs SEARCHES_AT_ONCE of all organizations together, and an organization's first search on a turn kept for it", async () => {
    const { started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 1 });
    search('a', 'a1');
    search('a', 'a2');
    await settle();
    expect(started).toEqual(['a1']);
    // b has none running: it starts at once, on one of the SEARCHES_AT_ONCE turns kept for first searches ...
    search('b', 'b1');
    await settle();
    expect(started).toEqual(['a1', 'b1']);
    // ... of which there are as many as SEARCHES_AT_ONCE: c waits, but for one search only.
    search('c', 'c1');
    await settle();
    expect(started).toEqual(['a1', 'b1']);
    // a and c have none running now: a has waited longest.
    await finish('a1');
    expect(started).toEqual(['a1', 'b1', 'a2']);
    await finish('b1');
    expect(started).toEqual(['a1', 'b1', 'a2', 'c1']);
    await finish('a2', 'c1');
    await all();
  });

  it("starts a quiet organization's search at once, and its next before a flooding organization's backlog", async () => {
    const { started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2 });
    for (let i = 1; i <= 6; i++) search('flood', `f${i}`);
    await settle();
    expect(started).toEqual(['f1', 'f2']);
    search('quiet', 'q1');
    await settle();
    expect(started).toEqual(['f1', 'f2', 'q1']);
    // Queued while its first runs, behind four of the flood's: it goes first once it has none running.
    search('quiet', 'q2');
    await finish('f1');
    expect(started).toEqual(['f1', 'f2', 'q1']);
    await finish('q1');
    expect(started.slice(3)).toEqual(['q2']);
    await finish('f2');
    expect(started.slice(4)).toEqual(['f3']);
    // quiet sent a search less than ACTIVE_MS ago: the flood keeps to one turn, the other stays free.
    await finish('q2');
    expect(started.slice(5)).toEqual([]);
    clock += ACTIVE_MS + 1;
    await finish('f3');
    expect(started.slice(5)).toEqual(['f4', 'f5']);
    await finish('f4', 'f5');
    expect(started.slice(7)).toEqual(['f6']);
    await finish('f6');
    await all();
  });

  it('takes waiting organizations in turn, the one with the fewest searches running first', async () => {
    const { started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 3 });
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) search('a', name);
    search('b', 'b1');
    for (const name of ['b2', 'b3']) search('b', name);
    await settle();
    // b's first search on a turn kept for first searches; then the three turns are taken.
    expect(started).toEqual(['a1', 'a2', 'a3', 'b1']);
    await finish('a1', 'a2');
    // Two running (a3, b1): one turn free, and a and b have one each: a has waited longest.
    expect(started.slice(4)).toEqual(['a4']);
    // Then b's turn (round robin), though a has as many running.
    await finish('a3');
    expect(started.slice(5)).toEqual(['b2']);
    await finish('b1', 'a4', 'b2');
    expect(started.slice(6).sort()).toEqual(['a5', 'b3']);
    await finish('a5', 'b3');
    await all();
  });

  it("keeps one organization within SEARCHES_PER_ORGANIZATION while free turns go to the others' searches", async () => {
    const { started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 3, SEARCHES_PER_ORGANIZATION: 1 });
    search('a', 'a1');
    search('a', 'a2');
    search('b', 'b1');
    search('b', 'b2');
    await settle();
    expect(started).toEqual(['a1', 'b1']);
    search('c', 'c1');
    await settle();
    expect(started).toEqual(['a1', 'b1', 'c1']);
    await finish('c1', 'b1');
    expect(started).toEqual(['a1', 'b1', 'c1', 'b2']);
    await finish('a1');
    expect(started).toEqual(['a1', 'b1', 'c1', 'b2', 'a2']);
    await finish('a2', 'b2');
    await all();
  });

  it("refuses past one organization's queue without touching another's", async () => {
    const { gate, started, search, finish, all } = harness({
      SEARCHES_AT_ONCE: 1,
      SEARCH_QUEUE_PER_ORGANIZATION: 1,
    });
    search('a', 'a1');
    search('a', 'a2');
    search('b', 'b1');
    search('b', 'b2');
    await settle();
    expect(started).toEqual(['a1', 'b1']);
    await expect(gate.run('a', () => Promise.resolve('a3'))).rejects.toBeInstanceOf(SearchesBusyError);
    await expect(gate.run('b', () => Promise.resolve('b3'))).rejects.toBeInstanceOf(SearchesBusyError);
    // Among organizations with as many running (none), the one waiting longest goes first.
    await finish('a1', 'b1');
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await finish('a2', 'b2');
    await all();
  });
});

describe('SearchGate: a core left for the other organizations', () => {
  it('runs all SEARCHES_AT_ONCE of an organization alone, and SEARCHES_AT_ONCE − 1 while another has a search', async () => {
    const { started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 3 });
    for (let i = 1; i <= 6; i++) search('flood', `f${i}`);
    await settle();
    expect(started).toEqual(['f1', 'f2', 'f3']);
    search('quiet', 'q1');
    await settle();
    expect(started).toEqual(['f1', 'f2', 'f3', 'q1']);
    // Two turns of three free: the flood, with one running, may take one of them, not both.
    await finish('f1', 'f2');
    expect(started.slice(4)).toEqual(['f4']);
    await finish('q1');
    expect(started.slice(5)).toEqual([]);
    // quiet's next search starts at once on the turn the flood leaves free, not behind its backlog.
    search('quiet', 'q2');
    await settle();
    expect(started.slice(5)).toEqual(['q2']);
    await finish('q2', 'f3');
    // quiet's last search was less than ACTIVE_MS ago: still two of three for the flood.
    expect(started.slice(6)).toEqual(['f5']);
    clock += ACTIVE_MS + 1;
    await finish('f4');
    expect(started.slice(7)).toEqual(['f6']);
    await finish('f5', 'f6');
    await all();
  });

  it('counts an organization that only reads (noteActivity) as active for ACTIVE_MS', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2 });
    gate.noteActivity('reader');
    for (let i = 1; i <= 4; i++) search('flood', `f${i}`);
    await settle();
    // One turn of two: the other is the reader's core.
    expect(started).toEqual(['f1']);
    clock += ACTIVE_MS - 1;
    await finish('f1');
    expect(started).toEqual(['f1', 'f2']);
    clock += 2;
    await finish('f2');
    expect(started).toEqual(['f1', 'f2', 'f3', 'f4']);
    // The flood's own requests never count as another organization's.
    gate.noteActivity('flood');
    search('flood', 'f5');
    await finish('f3');
    expect(started.slice(4)).toEqual(['f5']);
    await finish('f4', 'f5');
    await all();
  });

  it('leaves a flooder one turn at SEARCHES_AT_ONCE 1 (its first search is never held back)', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 1 });
    gate.noteActivity('reader');
    search('flood', 'f1');
    search('flood', 'f2');
    await settle();
    expect(started).toEqual(['f1']);
    await finish('f1');
    expect(started).toEqual(['f1', 'f2']);
    await finish('f2');
    await all();
  });
});

describe('SearchGate: an organization over SEARCH_TURN_SHARE_PERCENT rests while a light one is active', () => {
  /**
   * At a share of 50: a reader searches (1 ms), `meanwhile` happens, a flooder searches (40 ms) and sends
   * its next; the reader's next search starts at once and the flooder's waits out its 40 ms rest, also
   * while the reader owes its own 5 ms. Gives the harness with f2 running.
   */
  async function readerPacedWhileFlooderRests(meanwhile: (gate: SearchGate) => void = () => {}) {
    const light = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    light.search('reader', 'r0');
    clock += 1;
    await light.finish('r0');
    meanwhile(light.gate);
    light.search('flood', 'f1');
    clock += 40;
    await light.finish('f1');
    light.search('flood', 'f2');
    // Arriving owing nothing after a search of its own, the reader shows it paces itself.
    light.search('reader', 'r1');
    await settle();
    expect(light.started).toEqual(['r0', 'f1', 'r1']);
    clock += 5;
    await light.finish('r1');
    // The reader now owes a rest of 5 ms of its own, and is still light: f2 keeps waiting out its 40.
    expect(light.started).toEqual(['r0', 'f1', 'r1']);
    clock += 35;
    await wait(60);
    expect(light.started).toEqual(['r0', 'f1', 'r1', 'f2']);
    return light;
  }

  it('starts its next search after a rest as long as its last search took, at SEARCH_TURN_SHARE_PERCENT 50, while a reader is active', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    gate.noteActivity('reader');
    search('flood', 'f1');
    search('flood', 'f2');
    await settle();
    expect(started).toEqual(['f1']);
    clock += 40;
    await finish('f1');
    expect(started).toEqual(['f1']);
    // The rest ends 40 ms after f1 did: not at 39 (the wake-up comes back for the last millisecond)...
    clock += 39;
    await wait(60);
    expect(started).toEqual(['f1']);
    // ...but at 40.
    clock += 1;
    await wait(20);
    expect(started).toEqual(['f1', 'f2']);
    await finish('f2');
    await all();
  });

  it('rests a third as long at 75 %, and the others start at once meanwhile', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 75 });
    gate.noteActivity('reader');
    search('flood', 'f1');
    search('flood', 'f2');
    await settle();
    clock += 30;
    await finish('f1');
    search('reader', 'r1');
    await settle();
    expect(started).toEqual(['f1', 'r1']);
    clock += 10;
    await wait(30);
    expect(started).toEqual(['f1', 'r1', 'f2']);
    await finish('r1', 'f2');
    await all();
  });

  it('keeps a reader light during its own short rest when its searches are further apart than the gate forgets spent rests, as long as it reads meanwhile', async () => {
    const light = await readerPacedWhileFlooderRests((gate) => {
      // Its rest (1 ms) is long over when the gate next prunes what it keeps (once per ACTIVE_MS); its
      // reads keep it active.
      for (let step = 0; step < 3; step++) {
        clock += ACTIVE_MS / 2;
        gate.noteActivity('reader');
      }
    });
    await light.finish('f2');
    await light.all();
  });

  it('never rests alone, nor within its share, nor beside another flooder only, nor at SEARCH_TURN_SHARE_PERCENT 100; a flooder from one connection rests too', async () => {
    // Alone: f2 starts the moment f1 ends, however long f1 took.
    const alone = harness({ SEARCHES_PER_ORGANIZATION: 1, SEARCH_TURN_SHARE_PERCENT: 50 });
    alone.search('flood', 'f1');
    alone.search('flood', 'f2');
    clock += 500;
    await alone.finish('f1');
    expect(alone.started).toEqual(['f1', 'f2']);
    await alone.finish('f2');
    await alone.all();

    // A reader within its share never waits, while a flooder from one connection (its searches never
    // queue: each is sent when the last is answered) rests like one from many.
    const light = await readerPacedWhileFlooderRests();
    light.search('reader', 'r2');
    await settle();
    expect(light.started).toEqual(['r0', 'f1', 'r1', 'f2', 'r2']);
    await light.finish('f2', 'r2');
    await light.all();

    // Two flooders (each with searches waiting) share the turns without resting: no light one to leave cores to.
    const both = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    both.search('a', 'a1');
    both.search('b', 'b1');
    for (const name of ['a2', 'a3']) both.search('a', name);
    for (const name of ['b2', 'b3']) both.search('b', name);
    await settle();
    expect(both.started).toEqual(['a1', 'b1']);
    clock += 500;
    await both.finish('a1', 'b1');
    expect(both.started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await both.finish('a2', 'b2', 'a3', 'b3');
    await both.all();

    // Pacing off: a flooder with another organization active still runs back to back (on its one turn).
    const off = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 100 });
    off.gate.noteActivity('reader');
    off.search('flood', 'f1');
    off.search('flood', 'f2');
    clock += 500;
    await off.finish('f1');
    expect(off.started).toEqual(['f1', 'f2']);
    await off.finish('f2');
    await off.all();
  });
});

describe('SearchGate: heavy organizations rest as one while a light one is active', () => {
  /**
   * `organization` sends HOLDS_TO_BE_HEAVY + 1 searches of `ms` one after another, each as the last
   * ends, so that each after the first arrives owing a rest and is held for it (at 50 %, `ms`): heavy
   * from its last. Returns with that last search running. `reader`, if given, reads at each step (it
   * would otherwise count as gone ACTIVE_MS after its last request).
   */
  async function floodUntilHeavy(h: ReturnType<typeof harness>, organization: string, ms = 10, reader?: string) {
    for (let i = 1; i <= HOLDS_TO_BE_HEAVY + 1; i++) {
      const name = `${organization}${i}`;
      if (reader) h.gate.noteActivity(reader);
      h.search(organization, name);
      await settle();
      if (i > 1) {
        expect(h.started).not.toContain(name);
        clock += ms;
        await wait(ms + 20);
      }
      expect(h.started).toContain(name);
      if (i <= HOLDS_TO_BE_HEAVY) {
        clock += ms;
        await h.finish(name);
      }
    }
  }

  /** The gate's own verdict (private): whether an organization counts as heavy now. */
  const heavy = (gate: SearchGate, organization: string) =>
    (gate as unknown as { held(organizationId: string, at: number): boolean }).held(organization, clock);

  it('gives a heavy organization its turns at SEARCHES_AT_ONCE 1, and makes a flooder with slow searches heavy too', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 1, SEARCH_TURN_SHARE_PERCENT: 50 });
    h.gate.noteActivity('reader');
    // Searches of 300 ms: a hold only every 600 ms, yet heavy at the third in a row.
    await floodUntilHeavy(h, 'a', 300, 'reader');
    expect(heavy(h.gate, 'a')).toBe(true);
    h.gate.noteActivity('reader');
    clock += 10;
    await h.finish(`a${HOLDS_TO_BE_HEAVY + 1}`);
    h.search('a', 'next');
    clock += 10;
    await wait(30);
    expect(h.started.at(-1)).toBe('next');
    await h.finish('next');
    await h.all();
  });

  it('keeps a flooder heavy, waiting its whole rest, when that rest is shorter than SEARCH_REST_ALLOWANCE_MS', async () => {
    // At 50 % with an allowance of 150, searches of 100 ms back to back: each owes 100, and the
    // allowance is passed at the third, so the flooder is heavy from its sixth.
    const h = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50, SEARCH_REST_ALLOWANCE_MS: 150 });
    let waited = 0;
    /** One search of 100 ms sent as the last ends; how long it waited for its turn (gate's clock). */
    const next = async (name: string) => {
      h.gate.noteActivity('reader');
      h.search('flood', name);
      await settle();
      let waitedNow = 0;
      while (!h.started.includes(name)) {
        clock += 10;
        waitedNow += 10;
        await wait(15);
      }
      clock += 100;
      await h.finish(name);
      waited = waitedNow;
    };
    for (let i = 1; i <= 6; i++) await next(`f${i}`);
    expect(heavy(h.gate, 'flood')).toBe(true);
    // Heavy, it owes 100 ms after each search, within the allowance, and waits all of it every time,
    // for longer than ACTIVE_MS (before: it counted as paced, and was light again a second later).
    for (let i = 7; i <= 14; i++) {
      await next(`f${i}`);
      expect({ search: i, waited }).toEqual({ search: i, waited: 100 });
    }
    expect(heavy(h.gate, 'flood')).toBe(true);
    await h.all();
  });

  it("never makes a reader wait for the flooders' shared rest, and counts a burst of its searches once", async () => {
    const h = harness({ SEARCHES_AT_ONCE: 4, SEARCH_TURN_SHARE_PERCENT: 50 });
    h.gate.noteActivity('light');
    await floodUntilHeavy(h, 'a');
    clock += 100;
    await h.finish(`a${HOLDS_TO_BE_HEAVY + 1}`);
    // The flooders owe a shared rest of 100 ms; the reader, over its share once, owes 10 ms of its own.
    h.search('reader', 'r1');
    clock += 10;
    await h.finish('r1');
    for (const name of ['r2', 'r3', 'r4']) h.search('reader', name);
    await settle();
    expect(h.started.at(-1)).toBe('r1');
    clock += 10;
    await wait(30);
    expect(h.started.slice(-3)).toEqual(['r2', 'r3', 'r4']);
    expect(heavy(h.gate, 'reader')).toBe(false);
    await h.finish('r2', 'r3', 'r4');
    await h.all();
  });

  it('runs one heavy search at a time between them, and charges each to a rest they share (six flooding organizations took both cores)', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 4, SEARCH_TURN_SHARE_PERCENT: 50 });
    h.gate.noteActivity('reader');
    await floodUntilHeavy(h, 'a');
    const aStarted = clock;
    // a4 runs; b, flooding the same way, is held for its own rests, then, heavy, waits for a's search.
    h.search('b', 'b1');
    await settle();
    expect(h.started).toContain('b1');
    for (let i = 2; i <= HOLDS_TO_BE_HEAVY + 1; i++) {
      clock += 10;
      await h.finish(`b${i - 1}`);
      h.search('b', `b${i}`);
      clock += 10;
      await wait(30);
    }
    const last = `b${HOLDS_TO_BE_HEAVY + 1}`;
    expect(h.started).not.toContain(last);
    // A reader's search starts at once beside a's, on a turn kept for first searches.
    h.search('reader', 'r1');
    await settle();
    expect(h.started.at(-1)).toBe('r1');
    await h.finish('r1');
    // a's search is charged to the rest a and b share (as long as it took, at 50 %): b, owing none of
    // its own, waits it out too.
    clock += 40;
    const rest = clock - aStarted;
    await h.finish(`a${HOLDS_TO_BE_HEAVY + 1}`);
    expect(h.started).not.toContain(last);
    clock += rest - 1;
    await wait(rest + 20);
    expect(h.started).not.toContain(last);
    clock += 1;
    await wait(20);
    expect(h.started.at(-1)).toBe(last);
    await h.finish(last);
    await h.all();
  });

  it('does not make heavy a reader held for its own rest once: it never waits for the flooders', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    h.gate.noteActivity('light');
    await floodUntilHeavy(h, 'a');
    // a's heavy search runs. The reader sends r2 as r1 ends: held for its own 10 ms rest only.
    h.search('reader', 'r1');
    clock += 10;
    await h.finish('r1');
    h.search('reader', 'r2');
    await settle();
    expect(h.started.at(-1)).toBe('r1');
    clock += 10;
    await wait(30);
    expect(h.started.at(-1)).toBe('r2');
    await h.finish('r2');
    // a's search leaves a shared rest; the reader's next search starts at once all the same.
    clock += 100;
    await h.finish(`a${HOLDS_TO_BE_HEAVY + 1}`);
    clock += 10;
    h.search('reader', 'r3');
    await settle();
    expect(h.started.at(-1)).toBe('r3');
    await h.finish('r3');
    await h.all();
  });

  it('lets heavy organizations run side by side again once no light one is active', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    gate.noteActivity('reader');
    for (const name of ['a1', 'a2']) search('a', name);
    for (const name of ['b1', 'b2']) search('b', name);
    await settle();
    clock += 40;
    await finish('a1', 'b1');
    expect(started).toEqual(['a1', 'b1']);
    // The reader has not been seen for ACTIVE_MS: a and b are flooders among themselves, both run at once.
    clock += ACTIVE_MS;
    await wait(60);
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await finish('a2', 'b2');
    await all();
  });
});

describe('SearchGate: a rest is bounded and re-checked', () => {
  it('owes at most MAX_REST_MS however long a search took, and stops resting once the light organization is gone', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 1 });
    gate.noteActivity('reader');
    search('flood', 'f1');
    search('flood', 'f2');
    await settle();
    // A search at the statement timeout, at a 1 % share: 99 × 15 s owed, capped.
    clock += 15_000;
    gate.noteActivity('reader');
    await finish('f1');
    expect(started).toEqual(['f1']);
    // (The gate's wake-up is a real timer, armed for the rest's length.)
    clock += MAX_REST_MS - 1;
    await wait(MAX_REST_MS + 20);
    expect(started).toEqual(['f1']);
    clock += 1;
    await wait(20);
    expect(started).toEqual(['f1', 'f2']);
    await finish('f2');

    // Owing a rest with no light organization seen for ACTIVE_MS: the flooder is alone, it goes on.
    search('flood', 'f3');
    search('flood', 'f4');
    await settle();
    clock += ACTIVE_MS + 100;
    await finish('f3');
    expect(started).toEqual(['f1', 'f2', 'f3', 'f4']);
    await finish('f4');
    await all();
  });
});

describe('SearchGate: SEARCH_REST_ALLOWANCE_MS, the rest a light organization may owe and still search', () => {
  /** A reader's search slowed to 60 ms (a rest of 240 owed at 20 %), then its next 40 ms later, beside a light neighbour. */
  async function slowedReader(allowance: number) {
    const light = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 20, SEARCH_REST_ALLOWANCE_MS: allowance });
    light.gate.noteActivity('neighbour');
    light.search('reader', 'r1');
    clock += 60;
    await light.finish('r1');
    clock += 40;
    light.gate.noteActivity('neighbour');
    light.search('reader', 'r2');
    await settle();
    return light;
  }

  it("starts a reader's next search at once after one of its searches was slowed, while another light organization is active", async () => {
    // Owing 200 ms, within 250: it searches at once.
    const allowed = await slowedReader(250);
    expect(allowed.started).toEqual(['r1', 'r2']);
    await allowed.finish('r2');
    await allowed.all();

    // Without an allowance it waited out those 200 ms (a neighbour twice a second: its search p99 2.3 ×).
    const strict = await slowedReader(0);
    expect(strict.started).toEqual(['r1']);
    clock += 200;
    await wait(230); // the gate's wake-up is a real timer, armed for the rest's length
    expect(strict.started).toEqual(['r1', 'r2']);
    await strict.finish('r2');
    await strict.all();
  });

  it('still rests a flooder from one connection once its owed rest passes the allowance, and charges again the rest its searches served', async () => {
    const { gate, started, search, finish, all } = harness({
      SEARCHES_AT_ONCE: 2,
      SEARCH_TURN_SHARE_PERCENT: 50,
      SEARCH_REST_ALLOWANCE_MS: 100,
    });
    gate.noteActivity('reader');
    // Searches of 40 ms back to back, at 50 %: 40 owed after the first, then 80, then 120 (each search's
    // 40, and the 40 of the last rest that its own time served).
    for (const name of ['f1', 'f2', 'f3']) {
      search('flood', name);
      await settle();
      expect(started.at(-1)).toBe(name);
      clock += 40;
      await finish(name);
    }
    search('flood', 'f4');
    await settle();
    expect(started).toEqual(['f1', 'f2', 'f3']);
    // It waits out the 20 ms beyond the allowance.
    clock += 19;
    await wait(30);
    expect(started).toEqual(['f1', 'f2', 'f3']);
    clock += 1;
    await wait(30);
    expect(started).toEqual(['f1', 'f2', 'f3', 'f4']);
    await finish('f4');
    await all();
  });
});

describe('SearchGate: a waiting search always gets its turn, or leaves with its client', () => {
  it('arms its wake-up from the clock reading that refused the turn, however late the next reading (live: a search stalled until another organization searched)', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    gate.noteActivity('reader');
    search('flood', 'f1');
    await settle();
    clock += 10;
    await finish('f1');
    // The rest owed (10 ms) ends between two readings of the clock, as on a busy event loop where
    // every reading is later than the one before.
    clock += 8.9;
    jest.spyOn(performance, 'now').mockImplementation(() => (clock += 0.5));
    search('flood', 'f2');
    await wait(30);
    expect(started).toEqual(['f1', 'f2']);
    await finish('f2');
    await all();
  });

  it('drops a waiting search whose client went: it never runs, rejects with the reason, and the next gets the turn', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_PER_ORGANIZATION: 1 });
    search('a', 'a1');
    const gone = new AbortController();
    const abandoned = gate.run(
      'a',
      () => {
        started.push('a2');
        return Promise.resolve('a2');
      },
      gone.signal,
    );
    search('a', 'a3');
    await settle();
    gone.abort(new Error('client gone'));
    await expect(abandoned).rejects.toThrow('client gone');
    await finish('a1');
    expect(started).toEqual(['a1', 'a3']);
    // A search whose client has already gone does not wait at all.
    await expect(gate.run('a', () => Promise.resolve('late'), gone.signal)).rejects.toThrow('client gone');
    await finish('a3');
    await all();
  });

  it('forgets an organization whose only waiting search left, so its place in line goes to the others', async () => {
    const { gate, started, search, finish, all } = harness({ SEARCHES_AT_ONCE: 1 });
    search('a', 'a1');
    search('x', 'x1');
    const gone = new AbortController();
    const abandoned = gate.run('b', () => Promise.resolve('b1'), gone.signal).catch((error: unknown) => error);
    search('c', 'c1');
    await settle();
    expect(started).toEqual(['a1', 'x1']);
    gone.abort(new Error('client gone'));
    expect(await abandoned).toEqual(new Error('client gone'));
    // b was first in line: had it stayed there with nothing waiting, the freed turn would go nowhere.
    await finish('a1');
    expect(started).toEqual(['a1', 'x1', 'c1']);
    await finish('x1', 'c1');
    await all();
  });

  it('holds at most SEARCH_QUEUE_TOTAL waiting, all organizations together, yet always one of an organization with none waiting', async () => {
    const { started, search, finish, all } = harness({
      SEARCHES_AT_ONCE: 1,
      SEARCHES_PER_ORGANIZATION: 1,
      SEARCH_QUEUE_PER_ORGANIZATION: 3,
      SEARCH_QUEUE_TOTAL: 4,
    });
    search('a', 'a1');
    search('b', 'b1');
    for (const name of ['a2', 'a3']) search('a', name);
    for (const name of ['b2', 'b3']) search('b', name);
    // Four waiting: the total. a's next is refused, though a's own queue has room; c, with none
    // waiting, still queues one, but not a second.
    search('a', 'a4');
    search('c', 'c1');
    search('c', 'c2');
    await finish('a1', 'b1');
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await finish('a2', 'b2');
    await finish('c1', 'a3');
    await finish('b3');
    const outcomes = await all();
    expect(outcomes.filter((outcome) => outcome instanceof SearchesBusyError)).toHaveLength(2);
    expect([...started].sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1']);
  });
});

const heavy = (gate: SearchGate, organization: string) =>
  (gate as unknown as { held(organizationId: string, at: number): boolean }).held(organization, clock);

/**
 * `organizations` flood from one connection each for `steps` steps of `ms`: at each step every running
 * search ends and its organization sends its next at once (waiting ones keep waiting). The clock only
 * moves here and every step ends searches (a dispatch), so no real timer is needed: a search that may
 * start by then does. Returns each organization's searches started and longest wait (to now if still waiting).
 */
async function flood(h: ReturnType<typeof harness>, organizations: string[], steps: number, ms = 10) {
  const sentAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const sent = new Map(organizations.map((o) => [o, 0]));
  const done = new Set<string>();
  const send = (organization: string) => {
    const n = sent.get(organization)! + 1;
    sent.set(organization, n);
    sentAt.set(`${organization}${n}`, clock);
    h.search(organization, `${organization}${n}`);
  };
  const note = () => {
    for (const name of h.started) if (!startedAt.has(name)) startedAt.set(name, clock);
  };
  for (const organization of organizations) send(organization);
  await settle();
  note();
  for (let step = 0; step < steps; step++) {
    clock += ms;
    const running = h.started.filter((name) => !done.has(name));
    for (const name of running) done.add(name);
    await h.finish(...running);
    note();
    for (const name of running) send(name.replace(/\d+$/, ''));
    await settle();
    note();
  }
  const result: Record<string, { started: number; longestWait: number }> = {};
  for (const organization of organizations) {
    let started = 0;
    let longestWait = 0;
    for (let n = 1; n <= sent.get(organization)!; n++) {
      const name = `${organization}${n}`;
      if (startedAt.has(name)) started++;
      longestWait = Math.max(longestWait, (startedAt.get(name) ?? clock) - sentAt.get(name)!);
    }
    result[organization] = { started, longestWait };
  }
  return result;
}

/**
 * Flooders from one connection each send their next search the moment the last is answered: between
 * two of their searches they have none running or waiting and owe a rest. Counted as light for that
 * (a version of the gate did), they rested for each other with no reader anywhere.
 */
describe('SearchGate: flooders from one connection each, with no reader, never rest for each other', () => {
  it('does not make a flooder rest for another flooder that is between two of its searches', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    h.search('a', 'a1');
    h.search('b', 'b1');
    await settle();
    expect(h.started).toEqual(['a1', 'b1']);
    clock += 10;
    await h.finish('a1', 'b1');
    // Each sends its next as soon as answered. When a2 arrives, b has none running or waiting and owes
    // 10 ms: it counts as light, and a2 is held for a's own rest although nobody but flooders is here.
    h.search('a', 'a2');
    h.search('b', 'b2');
    await settle();
    expect(h.started).toEqual(['a1', 'b1', 'a2', 'b2']);
    await h.finish('a2', 'b2');
  });

  it('never holds two flooders back for each other, at 50 % (both turns used) nor at 10 % (no stall of a second)', async () => {
    const half = await flood(harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 }), ['a', 'b'], 100);
    const tenth = await flood(harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 10 }), ['a', 'b'], 100);
    expect({ half, tenth }).toEqual({
      half: { a: { started: 101, longestWait: 0 }, b: { started: 101, longestWait: 0 } },
      tenth: { a: { started: 101, longestWait: 0 }, b: { started: 101, longestWait: 0 } },
    });
  });

  it('does not make two of three flooders heavy toward the third, which then floods alone', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50 });
    const result = await flood(h, ['a', 'b', 'c'], 40);
    expect({ result, heavy: ['a', 'b', 'c'].filter((o) => heavy(h.gate, o)) }).toEqual({
      result: {
        a: { started: 41, longestWait: 0 },
        b: { started: 41, longestWait: 0 },
        c: { started: 41, longestWait: 0 },
      },
      heavy: [],
    });
  });

  it('at SEARCHES_AT_ONCE 1, does not make one of two flooders heavy toward the other (it lost the turn kept for first searches, and rested)', async () => {
    const h = harness({ SEARCHES_AT_ONCE: 1, SEARCH_TURN_SHARE_PERCENT: 50 });
    const result = await flood(h, ['a', 'b'], 60);
    expect({ result, heavy: ['a', 'b'].filter((o) => heavy(h.gate, o)) }).toEqual({
      result: { a: { started: 61, longestWait: 0 }, b: { started: 61, longestWait: 0 } },
      heavy: [],
    });
  });

  it('the same with SEARCH_REST_ALLOWANCE_MS 250: a flooder owing less than the allowance is no light organization to the others', async () => {
    const allowance = { SEARCH_REST_ALLOWANCE_MS: 250 };
    const half = await flood(
      harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50, ...allowance }),
      ['a', 'b'],
      100,
    );
    const three = harness({ SEARCHES_AT_ONCE: 2, SEARCH_TURN_SHARE_PERCENT: 50, ...allowance });
    const result = await flood(three, ['a', 'b', 'c'], 40);
    expect({ half, result, heavy: ['a', 'b', 'c'].filter((o) => heavy(three.gate, o)) }).toEqual({
      half: { a: { started: 101, longestWait: 0 }, b: { started: 101, longestWait: 0 } },
      result: {
        a: { started: 41, longestWait: 0 },
        b: { started: 41, longestWait: 0 },
        c: { started: 41, longestWait: 0 },
      },
      heavy: [],
    });
  });
});
