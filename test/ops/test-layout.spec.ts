import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const TEST = new URL('..', import.meta.url).pathname;
const SRC = new URL('../../src/', import.meta.url).pathname;
/** The folders of test/ that mirror no room of src/: the cross-cutting specs and the shared helpers. */
const OWN_FOLDERS = ['ops', 'support', 'fixtures'];

/** Where a test goes (test/README.md): in the folder of the room it tests, so it can be found. */
describe('the layout of test/', () => {
  const entries = readdirSync(TEST);

  it('has no spec at its top: each sits in the folder of the room it tests', () => {
    expect(entries.filter((name) => /\.(e2e-|medium-)?spec\.ts$/.test(name))).toEqual([]);
  });

  it('has a folder only for a room of src/, or for ops, support and fixtures', () => {
    const rooms = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
    const folders = entries.filter((name) => statSync(join(TEST, name)).isDirectory());
    expect(folders.filter((name) => !rooms.includes(name) && !OWN_FOLDERS.includes(name))).toEqual([]);
  });
});
