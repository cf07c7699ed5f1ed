import { type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { creditsUsed } from '../support/knowledge.js';

const NOTHING_FOUND = 'I could not find anything in the knowledge base that answers this question.';

interface Source {
  document_id: string;
  start: number;
  end: number;
}

/**
 * The answer without a model (issue 21): the most relevant sentence first (cut, at most, to the clauses
 * or phrases that hold the answer: never inside a sentence's tokens), each cited, from the passage's prose (no Markdown markers, no page furniture), and a plain "nothing found"
 * when nothing answers.
 */
describe('extractive answers', () => {
  let test: TestApp;
  let user: SignedInUser;

  const ask = async (query: string) =>
    (await test.http().post('/v1/query/').set(user.auth).send({ query }).expect(200)).body as {
      answer: string;
      sources: Source[];
      credits_used: number;
    };
  const add = (title: string, content: string) =>
    test.http().post('/v1/documents/').set(user.auth).send({ title, content }).expect(201);
  const upload = (name: string, content: string) =>
    test.http().post('/v1/documents/').set(user.auth).attach('file', Buffer.from(content), name).expect(201);

  /** Each sentence of the answer ends with [n], and source n's located passage holds its words. */
  async function expectCited(answer: string, sources: Source[]): Promise<string[]> {
    const sentences = answer.split(/(?<=\[\d+\])\s+/);
    for (const sentence of sentences) {
      const cited = /^(.+) \[(\d+)\]$/s.exec(sentence);
      expect(cited).not.toBeNull();
      const source = sources[Number(cited![2]) - 1];
      const document = await test.http().get(`/v1/documents/${source.document_id}/`).set(user.auth).expect(200);
      const passage = (document.body.content as string).slice(source.start, source.end);
      const words = (text: string) =>
        text
          .toLowerCase()
          .match(/[\p{L}\p{N}@]+/gu)!
          .join(' ');
      expect(words(passage)).toContain(words(cited![1]));
    }
    return sentences.map((sentence) => sentence.replace(/ \[\d+\]$/, ''));
  }

  beforeAll(async () => {
    test = await startTestApp();
    user = await signUp(test);
    await add(
      'Super Bowl 50',
      'Super Bowl 50 was an American football game to determine the champion of the NFL for the 2015 season. ' +
        'The game was played on February 7, 2016, at Levi’s Stadium in the San Francisco Bay Area. ' +
        'It was televised by CBS in the U.S. during prime time. Their running back averaged a 4.7 yards per carry. ' +
        'Chief Justice John G. Roberts attended the game.',
    );
    await add(
      'Security',
      '# Reporting vulnerabilities\n\n' +
        'Report a vulnerability to **security@example.com** within a day. ' +
        'Details are at [our policy page](https://example.com/security?lang=en).\n\n' +
        '## Controlled substances\n\n' +
        '- Controlled substances (e.g. heroin) are never allowed on the premises.\n' +
        '- Alcohol is served at company events only.',
    );
    await upload(
      'expenses.html',
      '<html><body><header><a href="/">Home</a> | <a href="/p">Policies</a> | <a href="/c">Contact</a></header>' +
        '<nav><ul><li>Home</li><li>Expense policy</li><li>Travel</li></ul></nav>' +
        '<main><h1>Expense policy</h1><p>Meals are reimbursed up to 50 EUR a day with receipts.</p>' +
        '<p>Hotels are booked through the travel desk.</p></main>' +
        '<footer>Home | Policies | Contact · © Example Corp</footer></body></html>',
    );
  });
  afterAll(() => test.close());

  it('answers with the phrase of the most relevant sentence that holds the answer, alone when sure of it, cited', async () => {
    const { answer, sources } = await ask('Which network televised the game in the U.S.?');
    const sentences = await expectCited(answer, sources);
    // "It was televised by CBS in the U.S. during prime time." cut to the phrase naming the network.
    expect(sentences).toEqual(['by CBS']);
  });

  it.each([
    ['a decimal number', 'How many yards per carry did their running back average?', 'a 4.7 yards per carry.'],
    ['an initial', 'Which chief justice attended the game?', 'Chief Justice John G. Roberts attended the game.'],
    ['an e-mail address', 'Where do I report a vulnerability?', 'security@example.com within a day.'],
    ['an abbreviation in brackets', 'Are controlled substances allowed?', '(e.g. heroin) are never allowed'],
  ])('never cuts a sentence at %s', async (_, query, piece) => {
    const { answer, sources } = await ask(query);
    const sentences = await expectCited(answer, sources);
    expect(sentences[0]).toContain(piece);
  });

  it('quotes no Markdown marker and no page furniture', async () => {
    const markdown = await ask('Where are details of the vulnerability policy?');
    expect(markdown.answer).toContain('at our policy page.');
    expect(markdown.answer).not.toMatch(/\*\*|#|\]\(|^- /m);
    const html = await ask('How much are meals reimbursed under the expense policy?');
    const sentences = await expectCited(html.answer, html.sources);
    expect(sentences[0]).toBe('Meals are reimbursed up to 50 EUR a day');
    expect(html.answer).not.toMatch(/Home|Contact|©/);
    const stored = await test.http().get(`/v1/documents/${html.sources[0].document_id}/`).set(user.auth).expect(200);
    expect(stored.body.content).toBe(
      '# Expense policy\n\nMeals are reimbursed up to 50 EUR a day with receipts.\n\nHotels are booked through the travel desk.',
    );
  });

  it('says plainly that nothing answers a greeting or a question about something absent, cites nothing, and charges the query', async () => {
    for (const query of ['hi', 'Hello!', 'What is the capital of Atlantis?']) {
      const before = await creditsUsed(test, user.id);
      const response = await ask(query);
      expect(response.answer).toBe(NOTHING_FOUND);
      expect(response.credits_used).toBe(1);
      expect(await creditsUsed(test, user.id)).toBe(before + 1);
    }
  });

  it('quotes no sentence of a passage that does not answer the question', async () => {
    const { answer, sources } = await ask('When was the game played?');
    const sentences = await expectCited(answer, sources);
    // The first sentence cut to the phrase that answers "when" (the stadium is not asked for).
    expect(sentences[0]).toBe('on February 7, 2016');
    expect(answer).not.toMatch(/Meals|vulnerab|substances/);
  });
});
