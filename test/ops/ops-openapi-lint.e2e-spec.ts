import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../support/app.js';

const run = promisify(execFile);
const ROOT = process.cwd();
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** Runs a linter; a non-zero exit (problems found) is an answer here, not a failure of the call. */
async function lint(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(command, args, {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    if (stdout === undefined) throw error;
    return { stdout, stderr: stderr ?? '' };
  }
}

/**
 * The served /openapi.json as generic tools read it: Redocly's recommended rules (redocly.yaml) and
 * Spectral's OWASP API Security ruleset (.spectral.yaml), with only the exceptions those files justify.
 */
describe('OpenAPI document: generic linters', () => {
  let test: TestApp;
  let folder: string;
  let file: string;

  beforeAll(async () => {
    test = await startTestApp();
    const document = (await test.http().get('/openapi.json').expect(200)).body;
    // Inside the project, so .spectral.yaml's pointer overrides (`**/*.json#/...`) match it.
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    folder = mkdtempSync(join(ROOT, 'dist', 'openapi-lint-'));
    file = join(folder, 'openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
  });
  afterAll(async () => {
    rmSync(folder, { recursive: true, force: true });
    await test.close();
  });

  it('passes redocly lint (recommended rules) with no error and no warning', async () => {
    const { stdout } = await lint(bin('redocly'), ['lint', file, '--format', 'json']);
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map(
      (problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
  }, 60_000);

  it('passes spectral lint with the OWASP ruleset with no error', async () => {
    const { stdout } = await lint(bin('spectral'), ['lint', file, '--format', 'json', '--quiet']);
    const results = JSON.parse(stdout || '[]') as { code: string; severity: number; path: string[]; message: string }[];
    const errors = results
      .filter((result) => result.severity === 0)
      .map((result) => `${result.code} ${result.path.join('/')}: ${result.message}`);
    expect(errors).toEqual([]);
    // Nor a warning: what does not apply is switched off in .spectral.yaml, with the reason.
    expect(results.map((result) => `${result.code} ${result.path.join('/')}`)).toEqual([]);
  }, 60_000);
});
