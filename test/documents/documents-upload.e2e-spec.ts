import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { makePdf, signInAdmin } from '../support/knowledge.js';

const LIMIT = 4096;

describe('document uploads (multipart)', () => {
  let test: TestApp;
  let user: SignedInUser;

  beforeAll(async () => {
    test = await startTestApp({ MAX_UPLOAD_BYTES: String(LIMIT) });
    user = await signUp(test);
  });
  afterAll(() => test.close());

  const upload = (
    name: string,
    content: Buffer | string,
    fields: Record<string, string> = {},
    contentType?: string,
  ) => {
    let call = test.http().post('/v1/documents/').set(user.auth);
    for (const [field, value] of Object.entries(fields)) call = call.field(field, value);
    return call.attach('file', Buffer.from(content), contentType ? { filename: name, contentType } : name);
  };
  const storedContent = async (id: string) =>
    (await test.db.query('SELECT content FROM documents WHERE id = $1', [id])).rows[0].content as string;

  it('stores a plain-text file, titled by its file name', async () => {
    const response = await upload('notes.txt', 'First line.\n\nSecond paragraph about glaciers.').expect(201);
    expect(response.body).toMatchObject({
      title: 'notes.txt',
      content_type: 'text/plain',
      size_bytes: 45,
      chunk_count: 1,
      metadata: {},
    });
    expect(await storedContent(response.body.id)).toBe('First line.\n\nSecond paragraph about glaciers.');
  });

  it('takes an explicit title and JSON metadata from the form', async () => {
    const response = await upload('a.md', '# Heading\n\nBody text.', {
      title: 'My notes',
      metadata: '{"team": "geo", "year": 2025}',
    }).expect(201);
    expect(response.body).toMatchObject({
      title: 'My notes',
      content_type: 'text/markdown',
      metadata: { team: 'geo', year: 2025 },
    });
    expect(await storedContent(response.body.id)).toBe('# Heading\n\nBody text.');
  });

  it('reads UTF-8 with a byte-order mark and keeps non-ASCII file names', async () => {
    const response = await upload(
      'résumé.txt',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Café crème')]),
    ).expect(201);
    expect(response.body.title).toBe('résumé.txt');
    expect(await storedContent(response.body.id)).toBe('Café crème');
  });

  it('turns HTML into text: no scripts or styles, entities decoded, headings kept', async () => {
    const html =
      '<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Volcanoes</h1>' +
      '<p>Magma &amp; lava<br>rise.</p><script>alert(1)</script><ul><li>Basalt</li><li>Obsidian</li></ul></body></html>';
    const response = await upload('page.html', html).expect(201);
    expect(response.body.content_type).toBe('text/html');
    expect(await storedContent(response.body.id)).toBe('# Volcanoes\n\nMagma & lava\nrise.\n\n- Basalt\n\n- Obsidian');
    const search = await test.db.query(
      `SELECT count(*)::int AS n FROM document_chunks WHERE document_id = $1 AND search_vector @@ 'alert'::tsquery`,
      [response.body.id],
    );
    expect(search.rows[0].n).toBe(0);
  });

  it('extracts the text of a PDF', async () => {
    const response = await upload(
      'paper.pdf',
      makePdf(['Seismic waves travel through the mantle.', 'P waves are faster than S waves.']),
    ).expect(201);
    expect(response.body).toMatchObject({ title: 'paper.pdf', content_type: 'application/pdf', chunk_count: 1 });
    expect(await storedContent(response.body.id)).toBe(
      'Seismic waves travel through the mantle.\nP waves are faster than S waves.',
    );
  });

  it('goes by the MIME type when the name has no extension', async () => {
    const response = await upload('README', 'Just text.', {}, 'text/plain').expect(201);
    expect(response.body.content_type).toBe('text/plain');
  });

  it('works with an API key', async () => {
    const key = await createKey(test, user);
    await test
      .http()
      .post('/v1/documents/')
      .set('X-API-Key', key.key)
      .attach('file', Buffer.from('Keyed upload.'), 'k.txt')
      .expect(201);
  });

  it('lets an admin upload into a domain', async () => {
    const admin = await signInAdmin(test);
    await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Geo', slug: 'geo' }).expect(201);
    const response = await test
      .http()
      .post('/v1/domains/geo/documents/')
      .set(admin.auth)
      .attach('file', makePdf(['Plate boundaries.']), 'plates.pdf')
      .expect(201);
    expect(response.body.content_type).toBe('application/pdf');
  });

  const refusals: [string, () => ReturnType<typeof upload>, string][] = [
    ['an empty file', () => upload('empty.txt', ''), 'file: The submitted file is empty.'],
    [
      'a binary file named .txt',
      () => upload('image.txt', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02])),
      'file: The file is binary, not text (it contains NUL bytes).',
    ],
    [
      'text that is not UTF-8',
      () => upload('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x74])),
      'file: The file is not valid UTF-8 text.',
    ],
    [
      'a corrupt PDF',
      () => upload('broken.pdf', Buffer.from('%PDF-1.4\nthis is not really a pdf')),
      'file: The file is not a readable PDF (it is damaged or not a PDF).',
    ],
    [
      'a PDF without text',
      () => upload('scan.pdf', makePdf([])),
      'file: The PDF contains no extractable text (it may be a scanned image); upload a PDF with a text layer.',
    ],
    [
      'an unsupported type',
      () => upload('sheet.xlsx', 'PK\u0003\u0004'),
      'file: Unsupported file type "sheet.xlsx". Upload plain text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).',
    ],
    ['a file of white space', () => upload('blank.txt', ' \n\n \t'), 'file: The file contains no text.'],
    [
      'HTML without text',
      () => upload('blank.html', '<html><script>x()</script></html>'),
      'file: The file contains no text.',
    ],
    [
      'bad metadata',
      () => upload('m.txt', 'x', { metadata: '[1, 2]' }),
      'metadata: Must be a flat JSON object whose values are strings or numbers.',
    ],
    [
      'metadata that is not JSON',
      () => upload('m.txt', 'x', { metadata: '{oops' }),
      'metadata: Must be a JSON object (sent as a string field), e.g. {"source": "wiki"}.',
    ],
    ['a blank title', () => upload('m.txt', 'x', { title: '  ' }), 'title: This field may not be blank.'],
  ];

  it.each(refusals)('refuses %s with a 400 that says why', async (_, send, detail) => {
    const before = (await test.db.query('SELECT count(*)::int AS n FROM documents')).rows[0].n;
    const response = await send().expect(400);
    expect(response.body.detail).toBe(detail);
    expect((await test.db.query('SELECT count(*)::int AS n FROM documents')).rows[0].n).toBe(before);
  });

  it('refuses a file over MAX_UPLOAD_BYTES with a 413', async () => {
    const response = await upload('big.txt', 'a'.repeat(LIMIT + 1)).expect(413);
    expect(response.body).toEqual({ detail: 'The uploaded file is too large; the limit is 4 KB.' });
    await upload('fits.txt', 'a '.repeat(LIMIT / 2)).expect(201);
  });

  it('answers 413 for a file over MAX_UPLOAD_BYTES even when more parts follow it', async () => {
    const response = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .attach('file', Buffer.from('a'.repeat(LIMIT + 1)), 'big.txt')
      .attach('file', Buffer.from('y'), 'y.txt')
      .expect(413);
    expect(response.body).toEqual({ detail: 'The uploaded file is too large; the limit is 4 KB.' });
  });

  it('refuses a file in another field, or two files', async () => {
    const other = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .attach('document', Buffer.from('x'), 'x.txt')
      .expect(400);
    expect(other.body.detail).toBe('file: Send the document as one file in the "file" field.');
    const two = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .attach('file', Buffer.from('x'), 'x.txt')
      .attach('file', Buffer.from('y'), 'y.txt')
      .expect(400);
    expect(two.body.detail).toBe('file: Send exactly one file.');
  });

  it('names the missing file part when a multipart form carries no file', async () => {
    const response = await test.http().post('/v1/documents/').set(user.auth).field('title', 'Only a title').expect(400);
    expect(response.body).toEqual({
      detail: 'file: This field is required.',
      fields: { file: ['This field is required.'] },
    });
  });

  it('refuses a malformed multipart body with a 400, not a 500', async () => {
    const response = await test
      .http()
      .post('/v1/documents/')
      .set(user.auth)
      .set('Content-Type', 'multipart/form-data; boundary=XYZ')
      .send('--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated')
      .expect(400);
    expect(response.body.detail).toBe('The multipart body could not be read.');
  });
});
