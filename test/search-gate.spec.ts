import { SearchesBusyError } from '../src/common/errors.js';
import type { AppConfig } from '../src/config/env.schema.js';
import { SearchGate } from '../src/retrieval/search-gate.js';

/** A search that runs until the test ends it. */
function pending() {
  let finish!: (value: string) => void;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return { done, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SearchGate (SEARCHES_PER_ORGANIZATION, SEARCH_QUEUE_PER_ORGANIZATION)', () => {
  const gate = () =>
    new SearchGate({ SEARCHES_PER_ORGANIZATION: 2, SEARCH_QUEUE_PER_ORGANIZATION: 1 } as unknown as AppConfig);

  it('runs at most the limit of one organization at once, queues one more, and refuses the next with 429', async () => {
    const searches = gate();
    const started: string[] = [];
    const search = (name: string, work: { done: Promise<string> }) => () => {
      started.push(name);
      return work.done;
    };
    const [a, b, c] = [pending(), pending(), pending()];
    const runs = [searches.run('org-1', search('a', a)), searches.run('org-1', search('b', b))];
    const queued = searches.run('org-1', search('c', c));
    await settle();
    expect(started).toEqual(['a', 'b']);

    const refused = await searches.run('org-1', search('d', pending())).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SearchesBusyError);
    expect((refused as SearchesBusyError).status).toBe(429);
    expect((refused as SearchesBusyError).headers['Retry-After']).toBe('1');
    expect((refused as SearchesBusyError).message).toBe(
      'Too many searches from your organization at once (2 run at a time); retry in a second.',
    );

    // Another organization is not held back by the first one's searches.
    await expect(searches.run('org-2', () => Promise.resolve('other'))).resolves.toBe('other');

    a.finish('a');
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    b.finish('b');
    c.finish('c');
    await expect(Promise.all([...runs, queued])).resolves.toEqual(['a', 'b', 'c']);
  });

  it('gives the turn of a search that fails to the next, and forgets an organization with none left', async () => {
    const searches = gate();
    await expect(searches.run('org-1', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const [a, b] = [pending(), pending()];
    const runs = [searches.run('org-1', () => a.done), searches.run('org-1', () => b.done)];
    a.finish('a');
    b.finish('b');
    await expect(Promise.all(runs)).resolves.toEqual(['a', 'b']);
    expect((searches as unknown as { lanes: Map<string, unknown> }).lanes.size).toBe(0);
  });
});
