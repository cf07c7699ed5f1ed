import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadConfig } from '../../src/config/env.schema.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const SKIPPED = new Set(['node_modules', 'dist', 'screenshots']);

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => !SKIPPED.has(name))
    .flatMap((name) => filesUnder(join(path, name)));
}

/** What a user's clone holds and reads: the README, docs/, the service and the dashboard, and the root's settings. */
const userFacing = () =>
  ['README.md', 'docs', 'src', 'web', 'package.json', 'jest.config.js', 'redocly.yaml', '.spectral.yaml']
    .map((path) => join(ROOT, path))
    .filter((path) => existsSync(path))
    .flatMap(filesUnder);

const markdown = () => userFacing().filter((file) => file.endsWith('.md'));

/** The docs stand alone (issue 20): a clone has no ../shared, and every link and port in them works. */
describe('the documentation a clone carries', () => {
  it('never points into ../shared, which a clone does not have', () => {
    const pointing = userFacing().filter((file) =>
      /(?:\.\.\/)+shared\/|shared\/(?:spec|CONTRACT)/.test(readFileSync(file, 'utf8')),
    );
    expect(pointing.map((file) => relative(ROOT, file))).toEqual([]);
  });

  it('links only to files that exist', () => {
    const broken = markdown().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1])
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(join(dirname(file), target)))
        .map((target) => `${relative(ROOT, file)} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('names the port the service listens on by default', () => {
    const port = String(loadConfig({ NODE_ENV: 'test' }).PORT);
    const others = markdown().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/localhost:(\d+)/g)]
        .filter((match) => match[1] !== port && match[1] !== '5173')
        .map((match) => `${relative(ROOT, file)}: ${match[0]}`),
    );
    expect(others).toEqual([]);
  });

  it('keeps the two set-up commands in the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpm ci && npm start\n```');
    expect(readme).toContain('```sh\nnpm ci && npm test\n```');
  });
});

/** `npm ci` names no dependency's install script as unreviewed (npm 11 warns, npm 12 blocks). */
describe('install scripts', () => {
  const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

  function packagesUnder(modules: string): string[] {
    if (!existsSync(modules)) return [];
    return readdirSync(modules).flatMap((name) => {
      if (name.startsWith('.')) return [];
      if (name.startsWith('@')) return packagesUnder(join(modules, name)).map((inner) => `${name}/${inner}`);
      const nested = packagesUnder(join(modules, name, 'node_modules')).map((inner) => `${name}/node_modules/${inner}`);
      return [name, ...nested];
    });
  }

  it('are all reviewed in package.json allowScripts', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean>;
    };
    const reviewed = new Set(Object.keys(manifest.allowScripts ?? {}));
    const modules = join(ROOT, 'node_modules');
    const unreviewed = packagesUnder(modules).filter((path) => {
      const file = join(modules, path, 'package.json');
      if (!existsSync(file)) return false;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; scripts?: Record<string, string> };
      const scripted = INSTALL_SCRIPTS.some((script) => pkg.scripts?.[script] !== undefined);
      return scripted && !reviewed.has(pkg.name ?? path);
    });
    expect(unreviewed).toEqual([]);
  });
});
