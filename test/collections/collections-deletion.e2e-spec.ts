import { CollectionPurger, PURGE_BATCH } from '../../src/collections/collection-purger.js';
import { CollectionsRepository } from '../../src/collections/collections.repository.js';
import { createKey, signUp, startTestApp, type TestApp } from '../support/app.js';
import { connect } from '../support/database.js';

/** Deleting a collection: gone from reads at once, its documents deleted a batch per transaction after. */
describe('deleting a large collection', () => {
  let test: TestApp;

  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  const held = async (collectionId: string) =>
    (
      await test.db.query<{ collections: number; documents: number; chunks: number; terms: number; stats: number }>(
        `SELECT (SELECT count(*)::int FROM collections WHERE id = $1) AS collections,
                (SELECT count(*)::int FROM documents WHERE collection_id = $1) AS documents,
                (SELECT count(*)::int FROM document_chunks WHERE scope_id = $1) AS chunks,
                (SELECT count(*)::int FROM term_stats WHERE scope_id = $1) AS terms,
                (SELECT count(*)::int FROM corpus_stats WHERE scope_id = $1) AS stats`,
        [collectionId],
      )
    ).rows[0];

  it('disappears from every read at once (its name free again), then its documents go in batches', async () => {
    const user = await signUp(test);
    const auth = { Authorization: `Bearer ${(await createKey(test, user)).key}` };
    const big = (await test.http().post('/v1/collections/').set(auth).send({ name: 'Big' }).expect(201)).body
      .id as string;
    const count = PURGE_BATCH * 2 + 100;
    for (let start = 0; start < count; start += 100)
      await test
        .http()
        .post('/v1/documents/batch/')
        .set(auth)
        .send({
          collection_id: big,
          documents: Array.from({ length: 100 }, (_, i) => ({
            title: `Ticket ${start + i}`,
            content: `Ticket ${start + i}: the zebra printer jams on page ${i}.`,
          })),
        })
        .expect(201);
    await test.http().post('/v1/documents/').set(auth).send({ title: 'Kept', content: 'The zebra stays.' }).expect(201);
    expect(await held(big)).toMatchObject({ collections: 1, documents: count });

    const purger = test.app.get(CollectionPurger);
    const repository = test.app.get(CollectionsRepository);
    const batches: number[] = [];
    // Each batch's count, as the purger's real statement returned it.
    const purge = repository.purgeDocuments.bind(repository);
    repository.purgeDocuments = async (...args) => {
      const deleted = await purge(...args);
      batches.push(deleted);
      return deleted;
    };
    try {
      await test.http().delete(`/v1/collections/${big}/`).set(auth).expect(204);
      // At once, whatever the purge has done yet.
      await test.http().get(`/v1/collections/${big}/`).set(auth).expect(404);
      const listed = await test.http().get('/v1/collections/').set(auth).expect(200);
      expect(listed.body.results.map((c: { name: string }) => c.name)).toEqual(['default']);
      const documents = await test.http().get('/v1/documents/?limit=100').set(auth).expect(200);
      expect(documents.body.results.map((d: { title: string }) => d.title)).toEqual(['Kept']);
      await test
        .http()
        .post('/v1/search/')
        .set(auth)
        .send({ query: 'zebra', collection_ids: [big] })
        .expect(404);
      await test.http().get(`/v1/vector_stores/${big}`).set(auth).expect(404);
      await test
        .http()
        .post('/v1/documents/')
        .set(auth)
        .send({ title: 'Late', content: 'Too late.', collection_id: big })
        .expect(404);
      await test.http().delete(`/v1/collections/${big}/`).set(auth).expect(404);
      const again = await test.http().post('/v1/collections/').set(auth).send({ name: 'Big' }).expect(201);
      expect(again.body.id).not.toBe(big);

      await purger.idle();
      expect(await held(big)).toEqual({ collections: 0, documents: 0, chunks: 0, terms: 0, stats: 0 });
      // One transaction per batch, none over PURGE_BATCH documents.
      expect(batches.filter((n) => n > 0)).toEqual([PURGE_BATCH, PURGE_BATCH, 100]);
    } finally {
      repository.purgeDocuments = purge;
    }
    const search = await test.http().post('/v1/search/').set(auth).send({ query: 'zebra' }).expect(200);
    expect(search.body.results.map((r: { title: string }) => r.title)).toEqual(['Kept']);
  });

  it('a collection a stopped instance left half deleted is purged by the next one', async () => {
    const user = await signUp(test);
    const auth = { Authorization: `Bearer ${(await createKey(test, user)).key}` };
    const left = (await test.http().post('/v1/collections/').set(auth).send({ name: 'Left' }).expect(201)).body
      .id as string;
    await test
      .http()
      .post('/v1/documents/')
      .set(auth)
      .send({ title: 'Orphan', content: 'Left behind.', collection_id: left })
      .expect(201);
    // As a deletion whose instance stopped before purging: marked, everything still there.
    await test.db.query(`UPDATE collections SET deleted_at = now() WHERE id = $1`, [left]);
    expect(await held(left)).toMatchObject({ collections: 1, documents: 1 });
    // Out of every read while its documents are still stored.
    await test.http().get(`/v1/collections/${left}/`).set(auth).expect(404);
    const documents = await test.http().get('/v1/documents/').set(auth).expect(200);
    expect(documents.body.results).toEqual([]);
    const orphan = (await test.db.query<{ id: string }>(`SELECT id FROM documents WHERE collection_id = $1`, [left]))
      .rows[0].id;
    await test.http().get(`/v1/documents/${orphan}/`).set(auth).expect(404);
    await test.http().delete(`/v1/documents/${orphan}/`).set(auth).expect(404);
    await test.http().post('/v1/collections/').set(auth).send({ name: 'Left' }).expect(201);
    const stores = await test.http().get('/v1/vector_stores').set(auth).expect(200);
    expect(stores.body.data.map((s: { id: string }) => s.id)).not.toContain(left);
    const purger = test.app.get(CollectionPurger);
    purger.wake(); // what the next instance's start (or its minute's round) does
    await purger.idle();
    expect(await held(left)).toEqual({ collections: 0, documents: 0, chunks: 0, terms: 0, stats: 0 });
  });

  it('many collections left deleted are all purged in one round, not 100 a minute', async () => {
    const user = await signUp(test);
    const auth = { Authorization: `Bearer ${(await createKey(test, user)).key}` };
    const kept = (await test.http().post('/v1/collections/').set(auth).send({ name: 'Kept' }).expect(201)).body
      .id as string;
    const organization = (
      await test.db.query<{ organization_id: string }>(`SELECT organization_id FROM collections WHERE id = $1`, [kept])
    ).rows[0].organization_id;
    await test.db.query(
      `INSERT INTO collections (organization_id, name, deleted_at)
       SELECT $1, 'left-' || n, now() FROM generate_series(1, 250) n`,
      [organization],
    );
    const purger = test.app.get(CollectionPurger);
    purger.wake();
    await purger.idle();
    const left = await test.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM collections WHERE deleted_at IS NOT NULL`,
    );
    expect(left.rows[0].n).toBe(0);
    await test.http().get(`/v1/collections/${kept}/`).set(auth).expect(200);
  });

  it("the purge takes the organization's files_usage row before its cascade reaches attachments (the order a file's deletion takes: no deadlock)", async () => {
    const user = await signUp(test);
    const auth = { Authorization: `Bearer ${(await createKey(test, user)).key}` };
    const store = (await test.http().post('/v1/vector_stores').set(auth).send({ name: 'Purged store' }).expect(201))
      .body.id as string;
    const file = (
      await test
        .http()
        .post('/v1/files')
        .set(auth)
        .field('purpose', 'assistants')
        .attach('file', Buffer.from('A file whose store is purged.'), { filename: 'p.txt', contentType: 'text/plain' })
        .expect(201)
    ).body.id as string;
    await test.http().post(`/v1/vector_stores/${store}/files`).set(auth).send({ file_id: file }).expect(201);
    let attached: { document_id: string | null; organization_id: string } | undefined;
    for (let i = 0; i < 200 && !attached?.document_id; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      attached = (
        await test.db.query<{ document_id: string | null; organization_id: string }>(
          `SELECT document_id, organization_id FROM vector_store_files WHERE collection_id = $1`,
          [store],
        )
      ).rows[0];
    }
    const documentId = attached?.document_id;
    expect(documentId).toEqual(expect.any(String));

    const holder = await connect(test.database.url);
    const probe = await connect(test.database.url);
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM files_usage WHERE organization_id = $1 FOR UPDATE`, [
        attached?.organization_id,
      ]);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await test.http().delete(`/v1/vector_stores/${store}`).set(auth).expect(200);
      let waiting = false;
      for (let i = 0; i < 200 && !waiting; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const { rows } = await test.db.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [
          holderPid,
        ]);
        waiting = rows.length > 0;
      }
      expect(waiting).toBe(true);
      // The purge waits for the usage row holding nothing else: the document is free to lock.
      await probe.query('BEGIN');
      await expect(
        probe.query(`SELECT 1 FROM documents WHERE id = $1 FOR UPDATE NOWAIT`, [documentId]),
      ).resolves.toMatchObject({ rowCount: 1 });
      await probe.query('ROLLBACK');
      await holder.query('COMMIT');
      await test.app.get(CollectionPurger).idle();
      expect(await held(store)).toEqual({ collections: 0, documents: 0, chunks: 0, terms: 0, stats: 0 });
    } finally {
      await holder.end();
      await probe.end();
    }
  });
});
