import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spoolDirectory, sweepAbandonedSpools } from '../../src/documents/spool-directory.js';

/** What a process killed mid-upload leaves in the temporary directory, and what the next start removes. */
describe('spool files left by a stopped process', () => {
  const shared = mkdtempSync(join(tmpdir(), 'kqs-sweep-test-'));
  afterAll(() => rmSync(shared, { recursive: true, force: true }));

  const aged = (path: string, minutes: number) => {
    const then = new Date(Date.now() - minutes * 60_000);
    utimesSync(path, then, then);
  };

  it('are swept at start: a dead process’s directory and old loose files; never a live instance’s', async () => {
    const dead = join(shared, 'kqs-spool-dead');
    mkdirSync(dead);
    writeFileSync(join(dead, 'kqs-attach-left'), 'left by a SIGKILL');
    aged(dead, 11);
    const live = join(shared, 'kqs-spool-live'); // another instance sharing TMPDIR, touched a minute ago
    mkdirSync(live);
    writeFileSync(join(live, 'kqs-upload-theirs'), 'being uploaded');
    aged(live, 1);
    writeFileSync(join(shared, 'kqs-upload-old'), 'left by an older release');
    aged(join(shared, 'kqs-upload-old'), 30);
    writeFileSync(join(shared, 'kqs-attach-fresh'), 'an older release, still running');
    writeFileSync(join(shared, 'unrelated'), 'not ours');
    aged(join(shared, 'unrelated'), 600);

    expect(await sweepAbandonedSpools(shared)).toBe(2);
    expect(readdirSync(shared).sort()).toEqual(['kqs-attach-fresh', 'kqs-spool-live', 'unrelated']);
    expect(readdirSync(live)).toEqual(['kqs-upload-theirs']);
  });

  it('never sweeps this process’s own directory, however long untouched', async () => {
    const own = spoolDirectory();
    writeFileSync(join(own, 'kqs-upload-mine'), 'being uploaded');
    aged(own, 60);
    await sweepAbandonedSpools(dirname(own));
    expect(readdirSync(own)).toEqual(['kqs-upload-mine']);
    rmSync(join(own, 'kqs-upload-mine'));
  });

  it('makes the directory again when a cleaner of the temporary directory removed it', () => {
    rmSync(spoolDirectory(), { recursive: true });
    expect(existsSync(spoolDirectory())).toBe(true);
  });
});
