/** Beyond this, a PDF is refused rather than tying up the process. */
export const PDF_MAX_PAGES = 2000;

/**
 * A PDF's stored text separates its pages with a form feed (as pdftotext ends its pages), on a line of
 * its own between blank lines: page n starts after the (n-1)-th form feed, and a form feed inside a
 * page's text is replaced by a space. Passages are chunked page by page (see passages.ts).
 */
export const PAGE_BREAK = '\n\n\f\n\n';
