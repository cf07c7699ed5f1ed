import type { IndexedChunk } from '../retrieval/search-index.repository.js';
import { chunkDocument } from './chunker.js';

/**
 * A document's chunks, located in its stored text. A PDF's text (`paged`, pages split by form feeds:
 * see extraction/pdf-pages.ts) is chunked page by page, so that every passage lies on one page.
 */
export function passagesOf(text: string, paged: boolean): IndexedChunk[] {
  if (!paged)
    return chunkDocument(text).map((chunk) => ({
      content: chunk.text,
      start: chunk.start,
      end: chunk.end,
      page: null,
    }));
  const passages: IndexedChunk[] = [];
  let from = 0;
  for (let page = 1; from <= text.length; page++) {
    const pageBreak = text.indexOf('\f', from);
    const to = pageBreak === -1 ? text.length : pageBreak;
    for (const chunk of chunkDocument(text.slice(from, to)))
      passages.push({ content: chunk.text, start: from + chunk.start, end: from + chunk.end, page });
    from = to + 1;
  }
  return passages;
}
