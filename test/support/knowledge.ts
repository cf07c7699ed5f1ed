import type { TestApp } from './app.js';
import { ADMIN, signIn, startTestApp } from './app.js';

/**
 * A minimal, valid one-page PDF (Helvetica, one text line per entry, correct xref offsets), written
 * by hand so the tests need no PDF library. No lines: a page without any text.
 */
export function makePdf(lines: string[]): Buffer {
  return makePagedPdf([lines]);
}

/** As makePdf, one page per entry of `pages` (Latin-1 text: Helvetica's encoding). */
export function makePagedPdf(pages: string[][]): Buffer {
  const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = (lines: string[]) =>
    lines.length > 0
      ? `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((line) => `(${escape(line)}) Tj T*`).join(' ')} ET`
      : '';
  // 1 catalog, 2 page tree, 3 font, then a page and its content stream per page.
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    ...pages.flatMap((lines, i) => [
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${pageIds[i] + 1} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
      `<< /Length ${Buffer.byteLength(stream(lines), 'latin1')} >>\nstream\n${stream(lines)}\nendstream`,
    ]),
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

export async function signInAdmin(test: TestApp) {
  return signIn(test, ADMIN.email, ADMIN.password);
}

export interface StatsCheck {
  stored: { term: string; df: number }[];
  expected: { term: string; df: number }[];
  corpus: { chunk_count: number; total_tokens: number } | null;
  expectedCorpus: { chunk_count: number; total_tokens: number };
}

/** The corpus's stored BM25 statistics next to the same figures recomputed from its chunks. */
export async function statsOf(test: TestApp, corpusId: string): Promise<StatsCheck> {
  const stored = await test.db.query('SELECT term, df FROM term_stats WHERE scope_id = $1 ORDER BY term', [corpusId]);
  const expected = await test.db.query(
    `SELECT e.lexeme AS term, count(*)::int AS df FROM document_chunks c, unnest(c.search_vector) e
      WHERE c.scope_id = $1 GROUP BY e.lexeme ORDER BY e.lexeme`,
    [corpusId],
  );
  const corpus = await test.db.query(
    'SELECT chunk_count::int, total_tokens::int FROM corpus_stats WHERE scope_id = $1',
    [corpusId],
  );
  const expectedCorpus = await test.db.query(
    'SELECT count(*)::int AS chunk_count, coalesce(sum(token_count), 0)::int AS total_tokens FROM document_chunks WHERE scope_id = $1',
    [corpusId],
  );
  return {
    stored: stored.rows,
    expected: expected.rows,
    corpus: corpus.rows[0] ?? null,
    expectedCorpus: expectedCorpus.rows[0],
  };
}

export interface SeedDocument {
  title: string;
  content: string;
  metadata?: Record<string, string | number>;
}

/** An active public domain with documents, created through the admin API. Returns the documents' ids. */
export async function createDomain(test: TestApp, slug: string, documents: SeedDocument[]): Promise<string[]> {
  const admin = await signInAdmin(test);
  await test
    .http()
    .post('/v1/domains/')
    .set(admin.auth)
    .send({ name: `Domain ${slug}`, slug })
    .expect(201);
  const ids: string[] = [];
  for (const document of documents) {
    const created = await test.http().post(`/v1/domains/${slug}/documents/`).set(admin.auth).send(document).expect(201);
    ids.push(created.body.id);
  }
  return ids;
}

export async function organizationIdOf(test: TestApp, userId: string): Promise<string> {
  const { rows } = await test.db.query('SELECT organization_id FROM users WHERE id = $1', [userId]);
  return rows[0].organization_id;
}

export async function setCredits(test: TestApp, userId: string, total: number, used = 0): Promise<void> {
  await test.db.query('UPDATE subscriptions SET monthly_credits = $2, credits_used = $3 WHERE organization_id = $1', [
    await organizationIdOf(test, userId),
    total,
    used,
  ]);
}

export async function creditsUsed(test: TestApp, userId: string): Promise<number> {
  const { rows } = await test.db.query('SELECT credits_used FROM subscriptions WHERE organization_id = $1', [
    await organizationIdOf(test, userId),
  ]);
  return rows[0].credits_used;
}

/** A tiny handbook: each document clearly answers one kind of question. */
export const HANDBOOK: SeedDocument[] = [
  {
    title: 'Rotating API keys',
    content:
      'To rotate an API key, call the rotate endpoint with a JWT access token. The old key stops working at once unless a grace period is given. ' +
      'Rotation issues a new key with the same name and expiry.',
    metadata: { section: 'keys', page: 12 },
  },
  {
    title: 'Monthly credit quota',
    content:
      'Every organization receives a monthly credit quota. Each query costs one credit. When the quota is exhausted the service answers 402 until the next calendar month.',
    metadata: { section: 'billing' },
  },
  {
    title: 'Uploading documents',
    content:
      'Documents can be uploaded as plain text, Markdown, HTML or PDF. The text is split into chunks at headings and paragraphs and indexed for full-text search.',
    metadata: { section: 'documents' },
  },
];

/** Makes supertest collect a text/event-stream body as one string (it buffers only known types). */
export function collectText(res: unknown, done: (error: Error | null, body: string) => void): void {
  // supertest's types call it a Response; in Node it is the incoming message stream.
  const stream = res as NodeJS.ReadableStream;
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  stream.on('end', () => done(null, text));
}

/**
 * A fresh app with the public domains `handbook` (HANDBOOK, ids in order) and `other` (one unrelated
 * document), as the query and search tests start.
 */
export async function startWithHandbook(
  env: Record<string, string> = {},
): Promise<{ test: TestApp; handbookIds: string[] }> {
  const test = await startTestApp(env);
  const handbookIds = await createDomain(test, 'handbook', HANDBOOK);
  await createDomain(test, 'other', [{ title: 'Elsewhere', content: 'Penguins live in the southern hemisphere.' }]);
  return { test, handbookIds };
}
