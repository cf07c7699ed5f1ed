import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The newest PostgreSQL server binaries on this machine (Debian keeps them out of PATH). */
function binDirectory(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const version of versions) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb'))) return bin;
  }
  throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin (install postgresql)');
}

export function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ThrowawayPostgres {
  url: string;
  port: number;
  directory: string;
  start(): Promise<void>;
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash (recovery at next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A private PostgreSQL cluster in a temporary directory on a spare loopback port, so fault tests can
 * stop and restart a real server without disturbing the shared one. initdb refuses to run as root,
 * so under root the cluster belongs to the `postgres` system user.
 */
export async function createThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = binDirectory();
  const directory = mkdtempSync(join(tmpdir(), 'kqs-pg-'));
  const data = join(directory, 'data');
  const asRoot = userInfo().uid === 0;
  const command = async (program: string, args: string[]) => {
    const file = join(bin, program);
    if (asRoot) return run('runuser', ['-u', 'postgres', '--', file, ...args], { cwd: directory });
    return run(file, args, { cwd: directory });
  };
  if (asRoot)
    chownSync(
      directory,
      Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
      Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
    );

  await command('initdb', ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await sparePort();
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const cluster: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    directory,
    async start() {
      await command('pg_ctl', [
        '-D',
        data,
        '-o',
        options,
        '-l',
        join(directory, 'server.log'),
        '-w',
        '-t',
        '30',
        'start',
      ]);
    },
    async stop(mode = 'fast') {
      await command('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
    },
    async destroy() {
      await cluster.stop('immediate').catch(() => undefined);
      rmSync(directory, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
