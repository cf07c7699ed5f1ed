import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';

/** The prefix of each process's spool directory in the temporary directory (`TMPDIR`, else /tmp). */
export const SPOOL_DIRECTORY_PREFIX = 'kqs-spool-';
/** Spool files of the releases before the per-process directory, loose in the temporary directory. */
const LOOSE_SPOOL_PREFIXES = ['kqs-upload-', 'kqs-attach-'];
/** How often a live process touches its spool directory. */
const HEARTBEAT_MS = 60_000;
/**
 * A spool directory untouched this long belongs to a process that died (a live one touches its own every
 * minute); loose spool files this old outlived any upload or extraction.
 */
export const SPOOL_ABANDONED_AFTER_MS = 10 * 60_000;

let directory: string | undefined;
let heartbeat: NodeJS.Timeout | undefined;

/**
 * This process's spool directory (made on first use, mode 0700): uploads and attaches spool their bytes
 * in it, so a process killed mid-upload leaves them in one place the next process to start removes,
 * and instances sharing a `TMPDIR` never remove each other's live files.
 */
export function spoolDirectory(): string {
  if (!directory) {
    const made = join(tmpdir(), `${SPOOL_DIRECTORY_PREFIX}${randomUUID()}`);
    directory = made;
    heartbeat = setInterval(() => {
      const now = new Date();
      utimes(made, now, now).catch(() => undefined);
    }, HEARTBEAT_MS);
    heartbeat.unref();
  }
  // Made again if a cleaner of the temporary directory took it; not the temporary directory itself (a
  // missing one fails the spool's write: a 503 saying so).
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch {
    // It exists (the usual case), or the temporary directory is missing.
  }
  return directory;
}

/**
 * Removes what processes that died left in the temporary directory: spool directories not touched for
 * SPOOL_ABANDONED_AFTER_MS (never this process's own) and loose spool files as old. How many it removed.
 * `root`: the temporary directory (tests give their own).
 */
export async function sweepAbandonedSpools(root = tmpdir(), now = Date.now()): Promise<number> {
  const own = spoolDirectory();
  let removed = 0;
  for (const name of await readdir(root)) {
    const path = join(root, name);
    const ours =
      (name.startsWith(SPOOL_DIRECTORY_PREFIX) && path !== own) ||
      LOOSE_SPOOL_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (!ours) continue;
    const touched = await stat(path).then(
      (info) => info.mtimeMs,
      () => now,
    );
    if (now - touched < SPOOL_ABANDONED_AFTER_MS) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** Sweeps abandoned spool files when the service starts (a SIGKILL leaves its spool behind). */
@Injectable()
export class SpoolSweeper implements OnApplicationBootstrap {
  private readonly logger = new Logger('Uploads');

  onApplicationBootstrap(): void {
    void sweepAbandonedSpools()
      .then((removed) => {
        if (removed > 0) this.logger.log(`Removed ${removed} spool file(s) left by a stopped process`);
      })
      .catch((error: unknown) => this.logger.warn(`Sweeping spool files failed: ${(error as Error).message}`));
  }
}
