import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildReason, inputsDigest, recordBuild } from '../../scripts/build-if-changed.mjs';

/** `npm start` builds only when the sources changed (issue 20): the prestart check, on a project of its own. */
describe('build only when the sources changed', () => {
  let root: string;
  const write = (path: string, content: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  /** What `npm run build` leaves behind. */
  const build = () => {
    write('dist/main.js', 'built');
    write('web/dist/index.html', '<!doctype html>');
    recordBuild(root);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'kqs-build-'));
    write('src/main.ts', 'main();');
    write('src/query/query.service.ts', 'export class QueryService {}');
    write('web/src/app.tsx', 'export const App = () => null;');
    write('tsconfig.json', '{}');
    write('package-lock.json', '{}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds a fresh clone, then not again while nothing changed', () => {
    expect(buildReason(root)).toBe('dist/main.js is missing');
    build();
    expect(buildReason(root)).toBeNull();
    // A checkout or a `touch` changes modification times, not what the build reads.
    utimesSync(join(root, 'src/main.ts'), new Date(), new Date(Date.now() + 60_000));
    expect(buildReason(root)).toBeNull();
  });

  it.each([
    ['an edited source', () => write('src/query/query.service.ts', 'export class QueryService { x = 1; }')],
    ['a new source', () => write('src/query/new.ts', '')],
    ['a deleted source', () => unlinkSync(join(root, 'src/query/query.service.ts'))],
    ['an edited dashboard source', () => write('web/src/app.tsx', 'export const App = () => 1;')],
    ['a changed tsconfig', () => write('tsconfig.json', '{"compilerOptions": {}}')],
    ['a changed lock file', () => write('package-lock.json', '{"lockfileVersion": 3}')],
  ])('rebuilds after %s', (_case, change) => {
    build();
    change();
    expect(buildReason(root)).toBe('the sources changed since the last build');
    build();
    expect(buildReason(root)).toBeNull();
  });

  it('rebuilds when the output is gone or was rebuilt from other sources since', () => {
    build();
    unlinkSync(join(root, 'web/dist/index.html'));
    expect(buildReason(root)).toBe('web/dist/index.html is missing');
    build();
    write('dist/query/query.service.js', 'compiled from other sources');
    expect(buildReason(root)).toBe('the output was rebuilt by other means since');
  });

  it('does not count what the build writes inside its inputs as a source', () => {
    const before = inputsDigest(root);
    write('web/dist/assets/index-abc123.js', 'bundle');
    write('web/node_modules/.vite/deps.json', '{}');
    expect(inputsDigest(root)).toBe(before);
    write('web/src/new.tsx', '');
    expect(inputsDigest(root)).not.toBe(before);
  });
});
