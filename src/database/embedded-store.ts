import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedStore {
  url: string;
  close(): Promise<void>;
}

/**
 * PostgreSQL 18 compiled to WASM, kept on disk under `dataDir`, served on a loopback port so that
 * TypeORM uses its ordinary `pg` driver: the same code path and result types as production.
 * (The `typeorm-pglite` driver shares one session across query runners and loses updates.)
 */
export async function startEmbeddedStore(dataDir: string, maxConnections: number): Promise<EmbeddedStore> {
  const directory = resolve(dataDir, 'pgdata');
  mkdirSync(directory, { recursive: true });
  const db = await PGlite.create({ dataDir: directory });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
