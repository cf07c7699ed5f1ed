import { DataSource } from 'typeorm';
import { retryingDeadlocks } from '../../src/database/run-migrations.js';
import { Bm25Retriever, DEFAULT_BM25_PARAMS } from '../../src/retrieval/bm25.retriever.js';
import { RETRIEVER, type Retriever } from '../../src/retrieval/retriever.js';
import { type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { createDomain, signInAdmin, statsOf } from '../support/knowledge.js';

const BIOLOGY = [
  {
    title: 'Photosynthesis',
    content:
      'Plants capture light energy with chlorophyll in their leaves. The light reactions split water and release oxygen, ' +
      'and the Calvin cycle fixes carbon dioxide into sugar.',
    metadata: { chapter: 1 },
  },
  {
    title: 'Cellular respiration',
    content:
      'Mitochondria break down glucose to make ATP. Oxygen is the final electron acceptor of the respiratory chain.',
    metadata: { chapter: 2 },
  },
  {
    title: 'Plate tectonics',
    content: 'The lithosphere is broken into plates that drift over the mantle. Earthquakes happen where plates meet.',
    metadata: { chapter: 3 },
  },
  { title: 'Marsupials', content: 'The kangaroo carries its young in a pouch.', metadata: { chapter: 4 } },
  {
    title: 'Model organisms',
    content: 'The zebrafish is transparent as an embryo, which makes development easy to watch.',
    metadata: { chapter: 5 },
  },
];

describe('BM25 retrieval', () => {
  let test: TestApp;
  let retriever: Retriever;
  let domainId: string;
  let alice: SignedInUser;
  let aliceOrg: string;
  let bob: SignedInUser;
  let bobOrg: string;
  const ids: Record<string, string> = {};

  const orgOf = async (user: SignedInUser) =>
    (await test.http().get('/auth/users/me/').set(user.auth).expect(200)).body.organization_id as string;

  beforeAll(async () => {
    test = await startTestApp();
    retriever = test.app.get(RETRIEVER);
    const admin = await signInAdmin(test);
    domainId = (
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Biology', slug: 'biology' }).expect(201)
    ).body.id;
    for (const doc of BIOLOGY) {
      ids[doc.title] = (
        await test.http().post('/v1/domains/biology/documents/').set(admin.auth).send(doc).expect(201)
      ).body.id;
    }
    alice = await signUp(test);
    bob = await signUp(test);
    [aliceOrg, bobOrg] = [await orgOf(alice), await orgOf(bob)];
    await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({
        title: 'Quarterly numbers',
        content: 'Our confidential photosynthesis startup lost money on kelp farming.',
      })
      .expect(201);
    await test
      .http()
      .post('/v1/documents/')
      .set(bob.auth)
      .send({ title: 'Bob notes', content: 'Kelp is a brown alga.' })
      .expect(201);
  });
  afterAll(() => test.close());

  it('ranks the obviously relevant document first, with its metadata and a marked snippet', async () => {
    const results = await retriever.search('How do plants use light energy?', { domainId }, { limit: 5 });
    expect(results[0]).toMatchObject({
      documentId: ids.Photosynthesis,
      title: 'Photosynthesis',
      metadata: { chapter: 1 },
    });
    expect(results[0].content).toContain('chlorophyll');
    expect(results[0].snippet).toContain('**light**');
    expect(results[0].snippet).toMatch(/\*\*Plants\*\*/);
    expect(results[0].score).toBeGreaterThan(0);
    const scores = results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('finds documents that share only some of the words (OR, not AND) and ranks by how many and how rare', async () => {
    const results = await retriever.search('oxygen earthquakes', { domainId }, { limit: 10 });
    expect(results.map((r) => r.title).sort()).toEqual(['Cellular respiration', 'Photosynthesis', 'Plate tectonics']);
    // "earthquakes" is in one document, "oxygen" in two: the rarer word weighs more.
    expect(results[0].title).toBe('Plate tectonics');
  });

  it('stems: a query word matches other forms of it', async () => {
    const results = await retriever.search('drifting plate', { domainId }, { limit: 3 });
    expect(results[0].title).toBe('Plate tectonics');
  });

  it('matches words of the title', async () => {
    const results = await retriever.search('marsupials', { domainId }, { limit: 3 });
    expect(results.map((r) => r.title)).toEqual(['Marsupials']);
  });

  it('returns distinct documents, at most `limit`', async () => {
    const results = await retriever.search(
      'oxygen plants mitochondria plates kangaroo zebrafish',
      { domainId },
      { limit: 3 },
    );
    expect(results).toHaveLength(3);
    expect(new Set(results.map((r) => r.documentId)).size).toBe(3);
  });

  it.each([['the and of to is'], ['?!... --- ;;'], [''], ['   ']])(
    'returns nothing, without error, for %j',
    async (query) => {
      await expect(retriever.search(query, { domainId }, { limit: 5 })).resolves.toEqual([]);
    },
  );

  it('returns nothing for words no document holds', async () => {
    await expect(retriever.search('xylophone quasar', { domainId }, { limit: 5 })).resolves.toEqual([]);
  });

  it('survives a 10,000-word query', async () => {
    const words = ['kangaroo', 'the', 'pouch', 'of', 'random', 'words'];
    const query = Array.from({ length: 10_000 }, (_, i) => `${words[i % words.length]}${i % 7 === 0 ? '' : i}`).join(
      ' ',
    );
    const started = Date.now();
    const results = await retriever.search(query, { domainId }, { limit: 5 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(results[0].title).toBe('Marsupials');
  });

  it('widens the search with context queries, at a lower weight', async () => {
    const alone = await retriever.search('zebrafish', { domainId }, { limit: 5 });
    expect(alone.map((r) => r.title)).toEqual(['Model organisms']);
    const widened = await retriever.search('zebrafish', { domainId }, { limit: 5, contextQueries: ['kangaroo pouch'] });
    expect(widened.map((r) => r.title)).toEqual(['Model organisms', 'Marsupials']);
  });

  it("keeps each organization's private documents to itself", async () => {
    const own = await retriever.search('photosynthesis kelp', { collectionIds: [aliceOrg] }, { limit: 5 });
    expect(own.map((r) => r.title)).toEqual(['Quarterly numbers']);
    const other = await retriever.search(
      'confidential photosynthesis startup kelp',
      { collectionIds: [bobOrg] },
      { limit: 5 },
    );
    expect(other.map((r) => r.title)).toEqual(['Bob notes']);
    const publicOnly = await retriever.search('confidential startup kelp farming', { domainId }, { limit: 5 });
    expect(publicOnly).toEqual([]);
    for (const source of [...other, ...publicOnly]) expect(source.content).not.toContain('confidential');
  });

  it('gives the same ranking with pruning as when scoring every candidate', async () => {
    const vocabulary = Array.from(
      { length: 60 },
      (_, i) => `term${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`,
    );
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const pick = () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)];
    const user = await signUp(test);
    const org = await orgOf(user);
    for (let d = 0; d < 40; d++) {
      const content = Array.from({ length: 30 + Math.floor(random() * 60) }, pick).join(' ');
      await test
        .http()
        .post('/v1/documents/')
        .set(user.auth)
        .send({ title: `Doc ${d} ${pick()}`, content })
        .expect(201);
    }
    const bm25 = test.app.get(Bm25Retriever);
    try {
      for (let q = 0; q < 15; q++) {
        const query = Array.from({ length: 2 + (q % 5) }, pick).join(' ');
        bm25.params = { ...DEFAULT_BM25_PARAMS, roundBudget: 1_000_000, candidateCap: 1_000_000, settleShare: 0 };
        const exhaustive = await bm25.search(query, { collectionIds: [org] }, { limit: 5 });
        bm25.params = { ...DEFAULT_BM25_PARAMS, roundBudget: 1, candidateCap: 1_000_000 };
        const pruned = await bm25.search(query, { collectionIds: [org] }, { limit: 5 });
        expect(pruned.map((r) => [r.documentId, r.score])).toEqual(exhaustive.map((r) => [r.documentId, r.score]));
      }
    } finally {
      bm25.params = DEFAULT_BM25_PARAMS;
    }
  });

  it("scores the common words too when the rare word's chunks turn out to score less than they could", async () => {
    // "zebra" is rare, so its round stops before "apple", which nearly every document holds (settleShare):
    // the guess is that the zebra chunks will outscore anything apple can add. Here they are long and
    // the apple documents short, so the guess is wrong; the next round must still find the apple ones.
    const user = await signUp(test);
    const org = await orgOf(user);
    const filler = Array.from({ length: 180 }, (_, i) => `filler${String.fromCharCode(97 + (i % 26))}`).join(' ');
    for (let d = 0; d < 2; d++)
      await test
        .http()
        .post('/v1/documents/')
        .set(user.auth)
        .send({ title: `Long ${d}`, content: `zebra ${filler}` })
        .expect(201);
    for (let d = 0; d < 38; d++) {
      const [title, content] = d < 30 ? [`Short ${d}`, 'apple apple apple'] : [`Other ${d}`, 'granite'];
      await test.http().post('/v1/documents/').set(user.auth).send({ title, content }).expect(201);
    }
    const bm25 = test.app.get(Bm25Retriever);
    const settled = await bm25.search('zebra apple', { collectionIds: [org] }, { limit: 2 });
    try {
      bm25.params = { ...DEFAULT_BM25_PARAMS, settleShare: 0 };
      const exhaustive = await bm25.search('zebra apple', { collectionIds: [org] }, { limit: 2 });
      expect(settled.map((r) => [r.title, r.score])).toEqual(exhaustive.map((r) => [r.title, r.score]));
    } finally {
      bm25.params = DEFAULT_BM25_PARAMS;
    }
    // The short apple documents outscore the long zebra ones: found only by the round after the guess.
    expect(settled.map((r) => r.title)).toEqual([expect.stringMatching(/^Short/), expect.stringMatching(/^Short/)]);
  });

  it('past the candidate cap, takes only chunks that hold several of the common words', async () => {
    const user = await signUp(test);
    const org = await orgOf(user);
    const docs = [
      ['Both words', 'Water and light reach the leaf.'],
      ['Both again', 'Light and water and soil.'],
      ['Water only', 'Water flows downhill.'],
      ['Light only', 'Light travels fast.'],
      ['Neither', 'Granite is hard.'],
    ];
    for (const [title, content] of docs)
      await test.http().post('/v1/documents/').set(user.auth).send({ title, content }).expect(201);
    const bm25 = test.app.get(Bm25Retriever);
    try {
      bm25.params = { ...DEFAULT_BM25_PARAMS, candidateCap: 1 };
      const capped = await bm25.search('water light', { collectionIds: [org] }, { limit: 5 });
      expect(capped.map((r) => r.title).sort()).toEqual(['Both again', 'Both words']);
    } finally {
      bm25.params = DEFAULT_BM25_PARAMS;
    }
    const exact = await bm25.search('water light', { collectionIds: [org] }, { limit: 5 });
    expect(exact).toHaveLength(4);
  });

  it('ranks a small corpus read chunk by chunk exactly as through the GIN index', async () => {
    // Below corpusScanChunks the ranking statement tests each of the corpus's chunks (ts_match_vq)
    // instead of reading the GIN index: the same chunks must match, with the same scores.
    const bm25 = test.app.get(Bm25Retriever);
    const queries = ['photosynthesis kelp', 'light water energy plants', 'granite', 'the sea and the kelp forests'];
    try {
      for (const query of queries) {
        bm25.params = { ...DEFAULT_BM25_PARAMS, corpusScanChunks: 0 };
        const throughIndex = await bm25.search(query, { domainId }, { limit: 10 });
        bm25.params = DEFAULT_BM25_PARAMS;
        const scanned = await bm25.search(query, { domainId }, { limit: 10 });
        expect(scanned.map((r) => [r.chunkId, r.score])).toEqual(throughIndex.map((r) => [r.chunkId, r.score]));
      }
      bm25.params = { ...DEFAULT_BM25_PARAMS, corpusScanChunks: 0 };
      expect((await bm25.search('photosynthesis', { domainId }, { limit: 10 })).length).toBeGreaterThan(0);
    } finally {
      bm25.params = DEFAULT_BM25_PARAMS;
    }
  });

  it('past the common posting budget, leaves the common words out once the informative ones filled the top k', async () => {
    // "zebra" fills the top 2 (in the titles too); the short document holding "water" and "light" three times
    // each outscores them, but holds none of the informative words: at scale (a budget of 0 postings here)
    // the round of common words is not run, since a chunk holding them once each would score less than the
    // second zebra document.
    const user = await signUp(test);
    const org = await orgOf(user);
    const filler = Array.from({ length: 120 }, (_, i) => `filler${String.fromCharCode(97 + (i % 26))}`).join(' ');
    const docs = [
      ['Zebra one', `zebra water ${filler}`],
      ['Zebra two', `zebra light ${filler}`],
      ['Short common', 'water water water light light light'],
      ['Water only', 'water flows'],
      ['Light only', 'light travels'],
    ];
    for (const [title, content] of docs)
      await test.http().post('/v1/documents/').set(user.auth).send({ title, content }).expect(201);
    const bm25 = test.app.get(Bm25Retriever);
    const corpus = { collectionIds: [org] };
    try {
      bm25.params = { ...DEFAULT_BM25_PARAMS, candidateCap: 2 };
      const exact = await bm25.search('zebra water light', corpus, { limit: 2 });
      // The two zebra documents score the same ("water" and "light" are equally common): either comes second.
      expect(exact.map((r) => r.title)).toEqual(['Short common', expect.stringMatching(/^Zebra (one|two)$/)]);
      bm25.params = { ...DEFAULT_BM25_PARAMS, candidateCap: 2, commonPostingBudget: 0 };
      const atScale = await bm25.search('zebra water light', corpus, { limit: 2 });
      expect(atScale.map((r) => r.title).sort()).toEqual(['Zebra one', 'Zebra two']);
      // With fewer results than asked for, the common round still runs at scale.
      const three = await bm25.search('zebra water light', corpus, { limit: 3 });
      expect(three.map((r) => r.title)).toContain('Short common');
    } finally {
      bm25.params = DEFAULT_BM25_PARAMS;
    }
  });

  it('keeps the statistics exact under concurrent inserts and deletes', async () => {
    const user = await signUp(test);
    const org = await orgOf(user);
    const texts = Array.from(
      { length: 24 },
      (_, i) => `Shared words everywhere, plus unique${i} and common${i % 3} terms. Kelp grows.`,
    );
    const created = await Promise.all(
      texts.map((content, i) =>
        test
          .http()
          .post('/v1/documents/')
          .set(user.auth)
          .send({ title: `Doc ${i}`, content })
          .expect(201),
      ),
    );
    let stats = await statsOf(test, org);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored).toContainEqual({ term: 'share', df: 24 });
    expect(stats.corpus).toEqual(stats.expectedCorpus);
    expect(stats.corpus?.chunk_count).toBe(24);

    await Promise.all(
      created.slice(0, 12).map((r) => test.http().delete(`/v1/documents/${r.body.id}/`).set(user.auth).expect(204)),
    );
    stats = await statsOf(test, org);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored).toContainEqual({ term: 'share', df: 12 });
    expect(stats.stored.map((row) => row.term)).not.toContain('unique0');
    expect(stats.corpus).toEqual({ ...stats.expectedCorpus, chunk_count: 12 });
  });

  it('splits words at slashes and hyphens, so a query finds them however it spells them', async () => {
    await createDomain(test, 'immunology', [
      { title: 'Tumour suppressors', content: 'The p53/MDM2 feedback loop keeps p53 levels low in unstressed cells.' },
      { title: 'Cytokine A', content: 'IL-6 signalling drives the acute phase response in the liver.' },
      { title: 'Cytokine B', content: 'IL-2 signalling drives the growth of T cells in the lymph nodes.' },
    ]);
    const user = await signUp(test);
    const sourcesFor = async (query: string) =>
      (
        (
          await test
            .http()
            .post('/v1/query/')
            .set(user.auth)
            .send({ query, domain: 'immunology', top_k: 3 })
            .expect(200)
        ).body.sources as { title: string }[]
      ).map((source) => source.title);
    // Indexed whole as a file path before, `p53/MDM2` never matched `MDM2` alone.
    expect(await sourcesFor('MDM2 inhibitors')).toEqual(['Tumour suppressors']);
    // `IL-6` was `il` plus a signed `-6`, which `IL 6` does not match: both cytokines tied on `il`.
    expect((await sourcesFor('IL 6 signalling'))[0]).toBe('Cytokine A');
    expect((await sourcesFor('IL-2 signalling'))[0]).toBe('Cytokine B');
  });

  it('forgets a deleted domain: documents, chunks and statistics', async () => {
    const admin = await signInAdmin(test);
    const temp = (
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Temp', slug: 'temp' }).expect(201)
    ).body.id;
    await test
      .http()
      .post('/v1/domains/temp/documents/')
      .set(admin.auth)
      .send({ title: 'T', content: 'Temporary kangaroo text.' })
      .expect(201);
    await test.http().delete('/v1/domains/temp/').set(admin.auth).expect(204);
    for (const table of [
      'documents WHERE domain_id',
      'document_chunks WHERE scope_id',
      'term_stats WHERE scope_id',
      'corpus_stats WHERE scope_id',
    ]) {
      expect((await test.db.query(`SELECT count(*)::int AS n FROM ${table} = $1`, [temp])).rows[0].n).toBe(0);
    }
    await expect(retriever.search('kangaroo', { domainId: temp }, { limit: 5 })).resolves.toEqual([]);
  });

  it('keeps search vectors in the chunk rows (migration 1763700460000), and ranks the same after it runs', async () => {
    const storage = async () =>
      (
        await test.db.query(
          `SELECT attstorage FROM pg_attribute WHERE attrelid = 'document_chunks'::regclass AND attname = 'search_vector'`,
        )
      ).rows[0].attstorage as string;
    const ranking = async () =>
      (await retriever.search('light energy oxygen', { domainId }, { limit: 5 })).map((r) => [r.title, r.score]);
    expect(await storage()).toBe('m');
    const before = await ranking();
    const dataSource = test.app.get(DataSource);
    // Back to before it: the migrations added after it are undone first (bounded by how many there are).
    // The service's workers keep polling meanwhile, as another instance's would during a deploy.
    for (let undone = 0; undone < dataSource.migrations.length && (await storage()) === 'm'; undone++)
      await retryingDeadlocks(() => dataSource.undoLastMigration({ transaction: 'each' }));
    expect(await storage()).toBe('x');
    expect(await ranking()).toEqual(before);
    await retryingDeadlocks(() => dataSource.runMigrations({ transaction: 'each' }));
    expect(await storage()).toBe('m');
    expect(await ranking()).toEqual(before);
    expect(before[0][0]).toBe('Photosynthesis');
  });
});
