import { chmodSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { StartupRefusal } from '../common/startup-refusal.js';

export interface EmbeddedStore {
  url: string;
  close(): Promise<void>;
}

export class EmbeddedStoreInUseError extends StartupRefusal {}

/**
 * PostgreSQL 18 compiled to WASM, kept on disk under `dataDir`, served on a loopback port so that
 * TypeORM uses its ordinary `pg` driver: the same code path and result types as production.
 * (The `typeorm-pglite` driver shares one session across query runners and loses updates.)
 */
export async function startEmbeddedStore(dataDir: string, maxConnections: number): Promise<EmbeddedStore> {
  const directory = resolve(dataDir, 'pgdata');
  // PGlite writes its files 0666 whatever the umask: the directory alone keeps other users out (0700, as
  // PostgreSQL requires of its data directory), tightened on every start.
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(directory, 0o700);
  const release = lockDataDirectory(directory);
  try {
    const db = await PGlite.create({ dataDir: directory });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      async close() {
        try {
          await server.stop();
          await db.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * PGlite has no lock of its own: a second instance on the same directory (a second `npm start`, or
 * the CLI while the service runs) silently loses one side's writes. A lock file holding the owner's
 * pid refuses that; a lock whose process is gone is stale and taken over.
 */
function lockDataDirectory(directory: string): () => void {
  const lockFile = `${directory}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
      if (isRunning(holder)) {
        throw new EmbeddedStoreInUseError(
          `The embedded store in ${directory} is in use by process ${holder}${holder === process.pid ? ' (this one)' : ''}. ` +
            'Stop that process first, or set DATABASE_URL to use a PostgreSQL server.',
        );
      }
      unlinkSync(lockFile);
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    try {
      unlinkSync(lockFile);
    } catch {
      // Already gone: nothing to release.
    }
  };
  process.on('exit', release);
  return release;
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
