import { formatBytes, ValidationFailedError } from '../../common/errors.js';
import { DecodeBudget, withDecodeBudget } from './pdf-decode-budget.js';
import { PAGE_BREAK, PDF_MAX_PAGES } from './pdf-pages.js';
import { storableText } from './storable-text.js';

/** Beyond these, a PDF is refused rather than tying up the process. */
const MAX_CHARS = 5_000_000;
/** Bytes pdf.js may decompress for one document (content streams, fonts, object streams), in all. */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | null = null;

const tooMuchText = () => ValidationFailedError.field('file', 'The PDF holds more text than a document may have.');
const tooMuchData = () =>
  ValidationFailedError.field(
    'file',
    `The PDF decompresses to more than ${formatBytes(MAX_DECODED_BYTES)}; it is refused as a possible decompression bomb.`,
  );
const unreadable = () =>
  ValidationFailedError.field('file', 'The file is not a readable PDF (it is damaged or not a PDF).');

/**
 * The text of a PDF, page by page, through Mozilla's pdf.js (the legacy build, which runs on Node 20;
 * loaded on first use because it is large). Lines are kept; pages become paragraphs, separated by a
 * form feed (see pdf-pages.ts) so that a passage's page is known; an empty page is kept as an empty one. Runs in an
 * extraction worker: pdf.js is synchronous for long stretches.
 */
export async function pdfToText(bytes: Buffer): Promise<string> {
  const budget = new DecodeBudget(MAX_DECODED_BYTES);
  try {
    return await withDecodeBudget(budget, () => readPages(bytes, budget));
  } catch (error) {
    if (budget.exceeded) throw tooMuchData();
    throw error;
  }
}

async function readPages(bytes: Buffer, budget: DecodeBudget): Promise<string> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await pdfjs;
  const task = getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  let document;
  try {
    document = await task.promise;
  } catch (error) {
    if ((error as Error | null | undefined)?.name === 'PasswordException')
      throw ValidationFailedError.field('file', 'The PDF is password-protected.');
    throw unreadable();
  }
  try {
    if (document.numPages > PDF_MAX_PAGES) {
      throw ValidationFailedError.field(
        'file',
        `The PDF has ${document.numPages} pages; at most ${PDF_MAX_PAGES} are accepted.`,
      );
    }
    const pages: string[] = [];
    let chars = 0;
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      let text = '';
      // Streamed, so that the text limit applies within a page, not after it.
      for await (const { items } of page.streamTextContent() as unknown as AsyncIterable<{
        items: { str?: string; hasEOL?: boolean }[];
      }>) {
        for (const item of items) if (item.str !== undefined) text += item.str + (item.hasEOL ? '\n' : '');
        if (chars + text.length > MAX_CHARS) throw tooMuchText();
        if (budget.exceeded) throw tooMuchData();
      }
      page.cleanup();
      if (budget.exceeded) throw tooMuchData();
      chars += text.length;
      pages.push(text.trim());
    }
    // Rejoin words hyphenated across a line break (within a page: a page break is no line break).
    return storableText(
      pages.map((page) => page.replace(/\f/g, ' ').replace(/(\p{L})-\n(\p{Ll})/gu, '$1$2')).join(PAGE_BREAK),
    );
  } catch (error) {
    if (error instanceof ValidationFailedError) throw error;
    throw unreadable();
  } finally {
    await document.destroy();
  }
}
