import OpenAI, { toFile } from 'openai';
import type pg from 'pg';
import { AttachWorker } from '../../src/openai-compat/attach-worker.js';
import { createKey, signUp, startTestApp, type TestApp } from '../support/app.js';
import { connect } from '../support/database.js';

/**
 * The document an attachment became goes with the attachment or not at all: a detach, a file's deletion
 * or a re-attach that fails half way (here: the document's row held by another connection, the waiting
 * statement cancelled as a statement timeout would) changes nothing, and its retry finishes the job.
 */
describe('vector-store deletes are atomic with the document they remove', () => {
  let test: TestApp;
  let openai: OpenAI;
  let auth: { Authorization: string };

  beforeAll(async () => {
    test = await startTestApp();
    const key = (await createKey(test, await signUp(test))).key;
    auth = { Authorization: `Bearer ${key}` };
    openai = new OpenAI({ baseURL: `${test.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => test.close());

  const settled = async (storeId: string) => {
    for (let i = 0; i < 300; i++) {
      await test.app.get(AttachWorker).idle();
      const { rows } = await test.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM vector_store_files WHERE collection_id = $1 AND status = 'in_progress'`,
        [storeId],
      );
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('files still in_progress');
  };

  const documentsOf = async (storeId: string) =>
    (
      await test.db.query<{ id: string }>(`SELECT id FROM documents WHERE collection_id = $1 ORDER BY created_at`, [
        storeId,
      ])
    ).rows.map((row) => row.id);

  const attachmentsOf = async (storeId: string) =>
    (
      await test.db.query<{ file_id: string; status: string; document_id: string | null }>(
        `SELECT file_id, status, document_id FROM vector_store_files WHERE collection_id = $1`,
        [storeId],
      )
    ).rows;

  /** A store with one file indexed as one document. */
  async function indexedStore(name: string) {
    const store = await openai.vectorStores.create({ name });
    const file = await openai.files.create({
      file: await toFile(Buffer.from(`The ${name} guava passage.`), `${name}.txt`),
      purpose: 'assistants',
    });
    await openai.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
    const [documentId] = await documentsOf(store.id);
    return { store: store.id, file: file.id, documentId };
  }

  /**
   * Sends the request while another connection holds the document's row, and cancels the request's
   * statement once it waits for that row: the request fails where a lock or statement timeout would.
   */
  async function failingOnDocumentLock(documentId: string, send: () => PromiseLike<{ status: number }>) {
    const holder: pg.Client = await connect(test.database.url);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM documents WHERE id = $1 FOR UPDATE', [documentId]);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const answer = Promise.resolve(send());
      for (let i = 0; i < 200; i++) {
        const { rows } = await test.db.query<{ cancelled: boolean }>(
          `SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
          [holderPid],
        );
        if (rows.some((row) => row.cancelled)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const response = await answer;
      await holder.query('COMMIT');
      return response;
    } finally {
      await holder.end();
    }
  }

  const searchHits = async (storeId: string) =>
    (await openai.vectorStores.search(storeId, { query: 'guava passage' })).data.map((hit) => hit.file_id);

  it('a detach that fails leaves the file attached and searchable; its retry removes both', async () => {
    const { store, file, documentId } = await indexedStore('detach');
    const failed = await failingOnDocumentLock(documentId, () =>
      test.http().delete(`/v1/vector_stores/${store}/files/${file}`).set(auth),
    );
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await attachmentsOf(store)).toEqual([{ file_id: file, status: 'completed', document_id: documentId }]);
    expect(await documentsOf(store)).toEqual([documentId]);

    await test.http().delete(`/v1/vector_stores/${store}/files/${file}`).set(auth).expect(200);
    expect(await attachmentsOf(store)).toEqual([]);
    expect(await documentsOf(store)).toEqual([]);
    expect(await searchHits(store)).toEqual([]);
  });

  it('a file deletion that fails leaves the file and its document; its retry deletes both', async () => {
    const { store, file, documentId } = await indexedStore('delete');
    const failed = await failingOnDocumentLock(documentId, () => test.http().delete(`/v1/files/${file}`).set(auth));
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await test.http().get(`/v1/files/${file}`).set(auth).expect(200);
    expect(await attachmentsOf(store)).toEqual([{ file_id: file, status: 'completed', document_id: documentId }]);
    expect(await documentsOf(store)).toEqual([documentId]);

    const retried = await test.http().delete(`/v1/files/${file}`).set(auth).expect(200);
    expect(retried.body).toEqual({ id: file, object: 'file', deleted: true });
    expect(await documentsOf(store)).toEqual([]);
    expect(await searchHits(store)).toEqual([]);
    expect((await openai.vectorStores.retrieve(store)).file_counts.total).toBe(0);
  });

  it('a detach waiting for its document and an upload meanwhile both finish once the document is free (one lock order, no deadlock)', async () => {
    const { store, file, documentId } = await indexedStore('waiting');
    const holder: pg.Client = await connect(test.database.url);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM documents WHERE id = $1 FOR UPDATE', [documentId]);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const detached = Promise.resolve(test.http().delete(`/v1/vector_stores/${store}/files/${file}`).set(auth));
      for (let i = 0; i < 200; i++) {
        const { rows } = await test.db.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [
          holderPid,
        ]);
        if (rows.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The upload counts its bytes in the organization's files_usage, which the detach holds (every change
      // of an attachment's charge takes that row first): it waits for the detach, not for ever.
      const uploaded = Promise.resolve(
        test
          .http()
          .post('/v1/files')
          .set(auth)
          .field('purpose', 'assistants')
          .attach('file', Buffer.from('meanwhile'), { filename: 'meanwhile.txt', contentType: 'text/plain' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.query('COMMIT');
      expect((await detached).status).toBe(200);
      expect((await uploaded).status).toBe(201);
      expect(await documentsOf(store)).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  // Eight rounds of upload, extraction and race: a round that needs a fresh extraction worker waits for
  // it to load (from TypeScript here, at a low priority); beside four busy processes that took 6-7 s, twice in one
  // run. A deadlock still fails fast: it is a 5xx, and a stuck attachment fails `settled` within 30 s.
  it("a document's deletion racing a re-attach of its file never deadlocks (no 5xx)", async () => {
    for (let round = 0; round < 8; round++) {
      const { store, file, documentId } = await indexedStore(`race-${round}`);
      const [deleted, reattached] = await Promise.all([
        Promise.resolve(test.http().delete(`/v1/documents/${documentId}/`).set(auth)),
        Promise.resolve(test.http().post(`/v1/vector_stores/${store}/files`).set(auth).send({ file_id: file })),
      ]);
      expect([204, 404]).toContain(deleted.status);
      expect(reattached.status).toBe(201);
      await settled(store);
      expect(await documentsOf(store)).toHaveLength(1);
    }
  }, 120_000);

  it('a re-attach that fails queues nothing; its retry leaves exactly one document', async () => {
    const { store, file, documentId } = await indexedStore('reattach');
    const failed = await failingOnDocumentLock(documentId, () =>
      test.http().post(`/v1/vector_stores/${store}/files`).set(auth).send({ file_id: file }),
    );
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await settled(store);
    expect(await attachmentsOf(store)).toEqual([{ file_id: file, status: 'completed', document_id: documentId }]);
    expect(await documentsOf(store)).toEqual([documentId]);

    await test.http().post(`/v1/vector_stores/${store}/files`).set(auth).send({ file_id: file }).expect(201);
    await settled(store);
    const documents = await documentsOf(store);
    expect(documents).toHaveLength(1);
    expect(documents[0]).not.toBe(documentId);
    expect(await searchHits(store)).toEqual([file]);
  });
});
