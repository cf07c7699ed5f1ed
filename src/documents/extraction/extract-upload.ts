import { extname } from 'node:path';
import { echoed, ValidationFailedError } from '../../common/errors.js';
import { decodeText } from './decode-text.js';
import { htmlToText } from './html-text.js';
import { pdfToText } from './pdf-text.js';

export type DocumentContentType = 'text/plain' | 'text/markdown' | 'text/html' | 'application/pdf';

export interface UploadedFile {
  originalname: string;
  mimetype: string;
  size: number;
  /** Where its bytes are spooled (removed when the response is over; see spool-file.ts). */
  path: string;
}

const BY_EXTENSION: Partial<Record<string, DocumentContentType>> = {
  '.txt': 'text/plain',
  '.text': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'text/html',
  '.pdf': 'application/pdf',
};

const BY_MIME_TYPE: Record<string, DocumentContentType> = {
  'text/plain': 'text/plain',
  'text/markdown': 'text/markdown',
  'text/x-markdown': 'text/markdown',
  'text/html': 'text/html',
  'application/xhtml+xml': 'text/html',
  'application/pdf': 'application/pdf',
};

/** The file's type from its extension, else from its declared MIME type; null when neither is supported. */
export function detectContentType(file: Pick<UploadedFile, 'originalname' | 'mimetype'>): DocumentContentType | null {
  const extension = extname(file.originalname).toLowerCase();
  if (extension && BY_EXTENSION[extension]) return BY_EXTENSION[extension];
  if (extension && extension !== '.') return null;
  return BY_MIME_TYPE[file.mimetype.split(';')[0].trim().toLowerCase()] ?? null;
}

/** The type of an upload, or a 400 naming `file` when it is not one we read. */
export function uploadContentType(file: UploadedFile): DocumentContentType {
  const contentType = detectContentType(file);
  if (!contentType) {
    throw ValidationFailedError.field(
      'file',
      `Unsupported file type "${echoed(file.originalname || file.mimetype)}". Upload plain text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).`,
    );
  }
  if (file.size === 0) throw ValidationFailedError.field('file', 'The submitted file is empty.');
  return contentType;
}

/**
 * The text of a document's bytes, or a 400 naming `file` that says why there is none. CPU-heavy on
 * hostile input: it runs in an extraction worker (see extract.worker.ts), never on the event loop.
 */
export async function extractText(bytes: Buffer, contentType: DocumentContentType): Promise<string> {
  if (contentType === 'application/pdf') {
    const text = await pdfToText(bytes);
    if (text.replace(/\f/g, '').trim() === '') {
      throw ValidationFailedError.field(
        'file',
        'The PDF contains no extractable text (it may be a scanned image); upload a PDF with a text layer.',
      );
    }
    // Not trimmed: leading empty pages count (see pdf-pages.ts).
    return text;
  }
  const decoded = decodeText(bytes);
  const text = contentType === 'text/html' ? htmlToText(decoded).text : decoded;
  if (text.trim() === '') throw ValidationFailedError.field('file', 'The file contains no text.');
  return text.trim();
}
