import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/env.schema.js';
import { bootSummary } from '../../src/lifecycle/boot-summary.js';
import { TEST_JWT_SECRET } from '../support/app.js';
import { buildService, type RunningService, startBuiltService } from '../support/built-service.js';

const lines = (output: string) => output.split('\n').filter((line) => line.trim() !== '');
const messageOf = (line: string) => (JSON.parse(line) as { message: string }).message;

/** What a new user sees on `npm start` (issue 20): a few lines, a second start refused plainly, GET /. */
describe('first boot', () => {
  let dataDir: string;
  let freshTmp: string;
  let service: RunningService | undefined;
  const running = () => {
    if (!service) throw new Error('the service did not start');
    return service;
  };

  beforeAll(async () => {
    await buildService();
    dataDir = mkdtempSync(join(tmpdir(), 'kqs-first-boot-'));
    // The embedded store, as `npm start` on a fresh clone: no DATABASE_URL. Its first boot runs every
    // migration in PGlite (WASM): a minute or more on two cores that other tests keep busy. Its own empty
    // TMPDIR, as on a fresh machine: in the shared one, spool directories that killed test processes left
    // over 10 minutes earlier are swept at start, one more line ("Removed N spool file(s)"), seen in CI.
    freshTmp = mkdtempSync(join(tmpdir(), 'kqs-first-boot-tmp-'));
    service = await startBuiltService(
      { DATA_DIR: dataDir, TMPDIR: freshTmp, JWT_SECRET: TEST_JWT_SECRET, NODE_ENV: 'development' },
      { readyWithinMs: 150_000 },
    );
  }, 240_000);
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(freshTmp, { recursive: true, force: true });
  });

  it('prints the version, the store and where to go, and nothing of the framework', () => {
    const output = lines(service?.output() ?? '');
    const messages = output.map(messageOf);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Knowledge Query Service \d+\.\d+\.\d+ \(Node v\d+.* listening on http:\/\/localhost:\d+/,
        ),
        `Data: the embedded PostgreSQL store in ${dataDir} (no DATABASE_URL)`,
        expect.stringMatching(/API reference http:\/\/localhost:\d+\/docs · health http:\/\/localhost:\d+\/health\/$/),
      ]),
    );
    // At most one more: the warning that the dashboard is not built, where it is not.
    expect(output.length).toBeLessThanOrEqual(4);
    expect(output.join('\n')).not.toMatch(/uuid-ossp|Mapped \{|RoutesResolver|InstanceLoader|Server listening/);
  });

  it('refuses a second start on the same data with the message alone, and a non-zero exit', async () => {
    const main = await buildService();
    const second = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', PORT: '0', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    second.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    second.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(lines(output)).toEqual([
      `The embedded store in ${join(dataDir, 'pgdata')} is in use by process ${String(running().child.pid)}. ` +
        'Stop that process first, or set DATABASE_URL to use a PostgreSQL server.',
    ]);
  });

  it('sends a browser from / to the dashboard, and answers other clients a JSON index', async () => {
    const browser = await fetch(`${running().url}/`, {
      headers: { Accept: 'text/html,*/*;q=0.8' },
      redirect: 'manual',
    });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/app/');
    const client = await fetch(`${running().url}/`, { headers: { Accept: 'application/json' } });
    expect(client.status).toBe(200);
    expect(await client.json()).toEqual({
      name: 'Knowledge Query Service',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      links: { dashboard: '/app/', docs: '/docs', openapi: '/openapi.json', health: '/health/' },
    });
    // Every other unknown path keeps the contract's verbatim 404.
    const unknown = await fetch(`${running().url}/nothing-here`);
    expect({ status: unknown.status, body: await unknown.json() }).toEqual({
      status: 404,
      body: { detail: 'Not found.' },
    });
  });
});

describe('the boot summary', () => {
  it('names a PostgreSQL server by host and database, never its user or password', () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      PORT: '3105',
      JWT_SECRET: TEST_JWT_SECRET,
      DATABASE_URL: 'postgres://kqs:s3cret-pass@db.internal:5433/knowledge',
    });
    const summary = bootSummary(config, true).join('\n');
    expect(summary).toContain('Data: PostgreSQL at db.internal:5433, database knowledge');
    expect(summary).toContain('Dashboard http://localhost:3105/app/');
    expect(summary).not.toMatch(/s3cret|kqs:/);
  });
});
