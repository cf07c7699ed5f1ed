import { type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { makePagedPdf } from '../support/knowledge.js';

/**
 * Every source locates its passage: `content.slice(start, end)` of the document (as GET returns it) is
 * the chunk's passage, white space aside, with the section heading a chunk repeats left out; PDF
 * passages carry their page. Offsets are JavaScript string indexes, so emoji count as two.
 */
describe('located citations', () => {
  let test: TestApp;
  let alice: SignedInUser;

  const spaced = (text: string) => text.replace(/\s+/g, ' ').trim();
  /** `n` sentences of filler with accents and emoji, several hundred words: several chunks. */
  const filler = (topic: string, n: number) =>
    Array.from({ length: n }, (_, i) => `Le café ${topic} numéro ${i} 😀 reste ouvert 👩‍🔬 jusqu'à minuit.`).join(' ');

  beforeAll(async () => {
    test = await startTestApp();
    alice = await signUp(test);
  });
  afterAll(() => test.close());

  const upload = (name: string, content: Buffer | string) =>
    test.http().post('/v1/documents/').set(alice.auth).attach('file', Buffer.from(content), name).expect(201);
  const ask = async (query: string) =>
    (await test.http().post('/v1/query/').set(alice.auth).send({ query, top_k: 5 }).expect(200)).body.sources as {
      document_id: string;
      chunk_id: string;
      start: number | null;
      end: number | null;
      page: number | null;
    }[];

  /** Checks a source against its document and its stored chunk; returns the located passage. */
  async function expectLocated(source: Awaited<ReturnType<typeof ask>>[number]): Promise<string> {
    const document = await test.http().get(`/v1/documents/${source.document_id}/`).set(alice.auth).expect(200);
    const content = document.body.content as string;
    expect(Number.isInteger(source.start) && Number.isInteger(source.end)).toBe(true);
    expect(0 <= source.start! && source.start! < source.end! && source.end! <= content.length).toBe(true);
    const passage = content.slice(source.start!, source.end!);
    const chunk = (await test.db.query('SELECT content FROM document_chunks WHERE id = $1', [source.chunk_id])).rows[0]
      .content as string;
    // The chunk is the passage, or the section's heading followed by the passage.
    if (spaced(chunk) !== spaced(passage)) {
      expect(spaced(chunk).endsWith(` ${spaced(passage)}`)).toBe(true);
      expect(chunk.slice(0, chunk.length - spaced(passage).length)).toMatch(/^#{1,6} /);
    }
    // No passage starts or ends in the middle of an emoji.
    expect(passage).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    return passage;
  }

  it('locates passages of a JSON text, emoji and accents included', async () => {
    const content = `${filler('alpha', 60)}\n\n${filler('beta', 60)} The word quetzalcoatl hides here 🐉.\n\n${filler('gamma', 60)}`;
    const created = await test
      .http()
      .post('/v1/documents/')
      .set(alice.auth)
      .send({ title: 'Cafés', content })
      .expect(201);
    expect(created.body.chunk_count).toBeGreaterThan(2);
    const [source] = await ask('quetzalcoatl');
    expect(source.document_id).toBe(created.body.id);
    expect(source.page).toBeNull();
    const passage = await expectLocated(source);
    expect(passage).toContain('The word quetzalcoatl hides here 🐉.');
    expect(source.start).toBeGreaterThan(0);
  });

  it('locates passages of Markdown, inside a section whose heading the chunk repeats', async () => {
    const markdown = `# Guide ✨\r\n\r\n${filler('delta', 20)}\r\n\r\n## Brewing 🍵\r\n\r\n${filler('epsilon', 80)} Steep the oolong leaves twice.\r\n`;
    const created = await upload('guide.md', markdown);
    const [source] = await ask('oolong leaves');
    expect(source.document_id).toBe(created.body.id);
    const passage = await expectLocated(source);
    expect(passage).toContain('Steep the oolong leaves twice.');
    expect(passage).not.toContain('## Brewing');
    const chunk = await test.db.query('SELECT content FROM document_chunks WHERE id = $1', [source.chunk_id]);
    expect(chunk.rows[0].content).toMatch(/^## Brewing 🍵\n\n/);
  });

  it('locates passages of HTML in its extracted text', async () => {
    const html = `<html><body><h1>Ferns 🌿</h1><p>${filler('zeta', 70)}</p><p>Fiddleheads unroll in spring — très vite.</p></body></html>`;
    const created = await upload('ferns.html', html);
    const [source] = await ask('fiddleheads unroll');
    expect(source.document_id).toBe(created.body.id);
    expect(source.page).toBeNull();
    expect(await expectLocated(source)).toContain('Fiddleheads unroll in spring — très vite.');
  });

  it('locates passages of a multi-page PDF on their page, empty pages counted', async () => {
    const created = await upload(
      'atlas.pdf',
      makePagedPdf([
        [],
        ['Crème brûlée recipes for volcanologists.'],
        ['Nothing to see on this page.'],
        ['Zirconium crystals date the oldest rocks.', 'They are 4.4 billion years old.'],
      ]),
    );
    expect(created.body.content_type).toBe('application/pdf');
    const [zircon] = await ask('zirconium crystals');
    expect(zircon.document_id).toBe(created.body.id);
    expect(zircon.page).toBe(4);
    expect(await expectLocated(zircon)).toContain('Zirconium crystals date the oldest rocks.');
    const [creme] = await ask('volcanologists');
    expect(creme.page).toBe(2);
    expect(await expectLocated(creme)).toContain('Crème brûlée recipes for volcanologists.');
  });

  it('locates the sources of chat answers too', async () => {
    const session = await test.http().post('/v1/chat/sessions/').set(alice.auth).send({}).expect(201);
    const reply = await test
      .http()
      .post(`/v1/chat/sessions/${session.body.id}/messages/`)
      .set(alice.auth)
      .send({ content: 'Where do zirconium crystals come from?' })
      .expect(201);
    const [source] = reply.body.assistant_message.sources;
    expect(source).toMatchObject({ page: 4 });
    expect(await expectLocated(source)).toContain('Zirconium');
  });

  it('gives null offsets for passages stored before they were located', async () => {
    await test.http().post('/v1/documents/').set(alice.auth).send({ title: 'Old', content: 'Antique xylophones.' });
    await test.db.query(
      `UPDATE document_chunks SET start_offset = NULL, end_offset = NULL WHERE content LIKE '%xylophones%'`,
    );
    const [source] = await ask('xylophones');
    expect(source).toMatchObject({ start: null, end: null, page: null });
  });
});
