import { ValidationFailedError } from '../../common/errors.js';
import { storableText } from './storable-text.js';

/** Beyond these, a PDF is refused rather than tying up the process. */
const MAX_PAGES = 2000;
const MAX_CHARS = 5_000_000;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | null = null;

/**
 * The text of a PDF, page by page, through Mozilla's pdf.js (the legacy build, which runs on Node 20;
 * loaded on first use because it is large). Lines are kept; pages become paragraphs.
 */
export async function pdfToText(bytes: Buffer): Promise<string> {
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
    const name = (error as Error)?.name;
    if (name === 'PasswordException') throw ValidationFailedError.field('file', 'The PDF is password-protected.');
    throw ValidationFailedError.field('file', 'The file is not a readable PDF (it is damaged or not a PDF).');
  }
  try {
    if (document.numPages > MAX_PAGES) {
      throw ValidationFailedError.field('file', `The PDF has ${document.numPages} pages; at most ${MAX_PAGES} are accepted.`);
    }
    const pages: string[] = [];
    let chars = 0;
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      chars += text.length;
      if (chars > MAX_CHARS) throw ValidationFailedError.field('file', 'The PDF holds more text than a document may have.');
      pages.push(text.trim());
    }
    // Rejoin words hyphenated across a line break.
    return storableText(pages.filter(Boolean).join('\n\n').replace(/(\p{L})-\n(\p{Ll})/gu, '$1$2'));
  } catch (error) {
    if (error instanceof ValidationFailedError) throw error;
    throw ValidationFailedError.field('file', 'The file is not a readable PDF (it is damaged or not a PDF).');
  } finally {
    await document.destroy();
  }
}
