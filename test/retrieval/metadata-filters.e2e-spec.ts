import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { creditsUsed } from '../support/knowledge.js';

const OPERATORS = '$eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists';

/** Each malformed filter the issue lists, with the 400's detail. */
const MALFORMED: [string, unknown, string][] = [
  ['an unknown operator', { year: { $foo: 1 } }, `filter: "year": Unknown operator "$foo"; use ${OPERATORS}.`],
  ['$in not a list', { year: { $in: 2024 } }, 'filter: "year": $in must be a list of at most 100 values.'],
  [
    '$in with 101 values',
    { year: { $in: Array.from({ length: 101 }, (_, i) => 1900 + i) } },
    'filter: "year": $in must be a list of at most 100 values.',
  ],
  [
    '21 fields',
    Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`field${i}`, i])),
    'filter: Ensure this object has no more than 20 fields.',
  ],
  [
    'a nested object',
    { author: { name: 'Ada' } },
    `filter: "author": Nested objects are not supported: "name" is not an operator (${OPERATORS}).`,
  ],
  [
    'numbers compared with strings',
    { year: { $gte: 2020, $lt: '2025' } },
    'filter: "year": Numbers cannot be compared with strings: use one type per field.',
  ],
  ['a wrong type', { year: { $exists: 'yes' } }, 'filter: "year": $exists must be true or false.'],
  ['not an object', ['year'], 'filter: Must be an object of metadata fields, e.g. {"year": 2024}.'],
];

interface Source {
  title: string;
  metadata: Record<string, string | number>;
}

describe('metadata filters (query, search, chat messages)', () => {
  let test: TestApp;
  let user: SignedInUser;
  let sessionId: string;

  const upload = (title: string, content: string, metadata?: Record<string, string | number>) =>
    test.http().post('/v1/documents/').set(user.auth).send({ title, content, metadata }).expect(201);
  const search = (body: Record<string, unknown>) =>
    test
      .http()
      .post('/v1/search/')
      .set(user.auth)
      .send({ query: 'falcon hunting', top_k: 50, ...body });
  const titles = async (filter: unknown) => {
    const response = await search({ filter }).expect(200);
    return (response.body.results as Source[]).map((source) => source.title).sort();
  };

  beforeAll(async () => {
    test = await startTestApp();
    user = await signUp(test);
    // Decoys say "falcon" far more often, so without a filter they fill every top k.
    for (let i = 0; i < 30; i++) {
      await upload(`Decoy ${i}`, 'Falcon falcon falcon hunting falcon. '.repeat(3) + `Decoy number ${i}.`, {
        kind: 'decoy',
        year: 1990 + i,
      });
    }
    for (let i = 0; i < 8; i++) {
      await upload(
        `Target ${i}`,
        `A long field report about birds of prey in general, among them a falcon, number ${i}.`,
        { kind: 'target', year: 2020 + i, team: i % 2 === 0 ? 'even' : 'odd' },
      );
    }
    await upload('Bare falcon', 'A falcon note with no metadata at all.');
    const session = await test.http().post('/v1/chat/sessions/').set(user.auth).send({}).expect(201);
    sessionId = session.body.id;
  });
  afterAll(() => test.close());

  describe.each([
    ['POST /v1/query/', () => test.http().post('/v1/query/').set(user.auth), { query: 'falcon' }],
    ['POST /v1/search/', () => test.http().post('/v1/search/').set(user.auth), { query: 'falcon' }],
    [
      'a chat message',
      () => test.http().post(`/v1/chat/sessions/${sessionId}/messages/`).set(user.auth),
      { content: 'falcon' },
    ],
  ])('%s', (_route, post, body) => {
    it.each(MALFORMED)('answers 400 naming filter for %s, spending nothing', async (_case, filter, detail) => {
      const before = await creditsUsed(test, user.id);
      const response = await post()
        .send({ ...body, filter })
        .expect(400);
      expect(response.body.detail).toBe(detail);
      expect(Object.keys(response.body.fields)).toEqual(['filter']);
      expect(await creditsUsed(test, user.id)).toBe(before);
    });

    it('keeps top_k full with documents that match, when better ones are filtered out', async () => {
      // A chat message has no top_k (it always takes 5): sending one is a 400 naming it.
      const topK = 'content' in body ? {} : { top_k: 5 };
      const response = await post()
        .send({ ...body, ...topK, filter: { kind: 'target' } })
        .expect('content' in body ? 201 : 200);
      const sources: Source[] =
        response.body.sources ?? response.body.results ?? response.body.assistant_message.sources;
      expect(sources).toHaveLength(5);
      for (const source of sources) expect(source.metadata.kind).toBe('target');
    });
  });

  it('ranks the filtered-out decoys first without a filter', async () => {
    const response = await search({ top_k: 5 }).expect(200);
    expect((response.body.results as Source[]).every((source) => source.metadata.kind === 'decoy')).toBe(true);
  });

  it('matches equality, lists, ranges and existence, ANDing the fields', async () => {
    expect(await titles({ kind: 'target', team: 'even' })).toEqual(['Target 0', 'Target 2', 'Target 4', 'Target 6']);
    expect(await titles({ kind: { $eq: 'target' }, year: { $in: [2021, 2023, 1999] } })).toEqual([
      'Target 1',
      'Target 3',
    ]);
    expect(await titles({ year: { $gte: 2018, $lt: 2022 } })).toEqual(['Decoy 28', 'Decoy 29', 'Target 0', 'Target 1']);
    expect(await titles({ year: { $gt: 2025 } })).toEqual(['Target 6', 'Target 7']);
    expect(await titles({ year: { $lte: 1991 } })).toEqual(['Decoy 0', 'Decoy 1']);
    expect(await titles({ team: { $exists: true }, year: { $nin: [2020, 2021, 2022, 2023, 2024, 2025] } })).toEqual([
      'Target 6',
      'Target 7',
    ]);
    expect(await titles({ team: { $gte: 'f', $lt: 'p' } })).toEqual(['Target 1', 'Target 3', 'Target 5', 'Target 7']);
  });

  it('lets a document without the field match only $ne, $nin and $exists: false', async () => {
    expect(await titles({ kind: { $exists: false } })).toEqual(['Bare falcon']);
    expect(await titles({ kind: { $ne: 'decoy' } })).toContain('Bare falcon');
    expect(await titles({ kind: { $nin: ['decoy', 'target'] } })).toEqual(['Bare falcon']);
    for (const filter of [{ kind: { $in: ['decoy', 'target'] } }, { year: { $lt: 3000 } }, { kind: { $exists: true } }])
      expect(await titles(filter)).not.toContain('Bare falcon');
  });

  it('matches list values whatever characters they hold (quotes, backslashes, commas, braces, NULL)', async () => {
    const other = await signUp(test);
    const odd = ['say "hi"', 'C:\\dir\\', 'a,b', '{x}', 'NULL', ' spaced ', 'ü∑', ''];
    for (const [i, value] of odd.entries())
      await test
        .http()
        .post('/v1/documents/')
        .set(other.auth)
        .send({ title: `Odd ${i}`, content: 'A falcon hunting note.', metadata: { odd: value, n: i - 2.5 } })
        .expect(201);
    const oddTitles = async (filter: unknown) => {
      const response = await test
        .http()
        .post('/v1/search/')
        .set(other.auth)
        .send({ query: 'falcon hunting', top_k: 50, filter })
        .expect(200);
      return (response.body.results as Source[]).map((source) => source.title).sort();
    };
    const all = odd.map((_, i) => `Odd ${i}`);
    expect(await oddTitles({ odd: { $in: odd } })).toEqual(all);
    for (const [i, value] of odd.entries())
      expect(await oddTitles({ odd: { $in: [value, 'absent'] } })).toEqual([`Odd ${i}`]);
    expect(await oddTitles({ odd: { $nin: ['say "hi"', 'C:\\dir\\', 'NULL'] } })).toEqual([
      'Odd 2',
      'Odd 3',
      'Odd 5',
      'Odd 6',
      'Odd 7',
    ]);
    expect(await oddTitles({ odd: { $in: ['say \\"hi\\"', 'C:\\\\dir', 'a', 'b', 'x', 'null'] } })).toEqual([]);
    expect(await oddTitles({ n: { $in: [-2.5, 0.5, 1e21] } })).toEqual(['Odd 0', 'Odd 3']);
    expect(await oddTitles({ n: { $nin: [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5] } })).toEqual(['Odd 6', 'Odd 7']);
  });

  it('compares a field only with values of its own type', async () => {
    // Stored years are numbers: a string range or equality matches none of them.
    expect(await titles({ year: { $gt: '2000' } })).toEqual([]);
    expect(await titles({ year: '2020' })).toEqual([]);
    expect(await titles({ year: 2020 })).toEqual(['Target 0']);
  });

  it('answers with no sources when nothing matches, and treats {} and null as no filter', async () => {
    expect(await titles({ kind: 'nothing' })).toEqual([]);
    expect(await titles({})).toHaveLength(39);
    expect(await titles(null)).toHaveLength(39);
  });

  it('stores the filtered sources with the chat answer', async () => {
    await test
      .http()
      .post(`/v1/chat/sessions/${sessionId}/messages/`)
      .set(user.auth)
      .send({ content: 'falcon', filter: { kind: { $exists: false } } })
      .expect(201);
    const { rows } = await test.db.query(
      `SELECT sources FROM chat_messages WHERE session_id = $1 AND role = 'assistant' ORDER BY created_at DESC LIMIT 1`,
      [sessionId],
    );
    expect((rows[0].sources as Source[]).map((source) => source.title)).toEqual(['Bare falcon']);
  });
});
