import { useEffect, useRef, useState } from 'preact/hooks';
import { documents } from '../api/endpoints';
import type { Source } from '../api/types';
import { useResource } from '../lib/use-resource';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';

/** A located source: its document's text with the passage (`content.slice(start, end)`) marked and in view. */
export type LocatedSource = Source & { start: number; end: number };

export function isLocated(source: Source): source is LocatedSource {
  return source.start !== null && source.end !== null;
}

interface Passage {
  start: number;
  end: number;
}

/** One page of a PDF's stored text: `content.slice(start, end)`, without the blank lines around page breaks. */
interface PageRange {
  start: number;
  end: number;
}

/**
 * A PDF's stored text separates its pages with a form feed (the service's PAGE_BREAK, `\n\n\f\n\n`):
 * page n starts after the (n-1)-th form feed. Any other document is one page.
 */
export function pagesOf(content: string, isPdf: boolean): PageRange[] {
  if (!isPdf) return [{ start: 0, end: content.length }];
  const pages: PageRange[] = [];
  let from = 0;
  for (;;) {
    const pageBreak = content.indexOf('\f', from);
    const to = pageBreak === -1 ? content.length : pageBreak;
    let start = from;
    let end = to;
    while (start < end && content[start] === '\n') start++;
    while (end > start && content[end - 1] === '\n') end--;
    pages.push({ start, end });
    if (pageBreak === -1) return pages;
    from = pageBreak + 1;
  }
}

/**
 * The passage's text as marked runs and unmarked gaps: whitespace that holds a blank line (between
 * Markdown paragraphs, say) and the whitespace at either end stay unmarked, so no empty line shows a
 * sliver of highlight. Offsets are into `content`.
 */
export function passageRuns(content: string, passage: Passage): { start: number; end: number; marked: boolean }[] {
  const runs: { start: number; end: number; marked: boolean }[] = [];
  const text = content.slice(passage.start, passage.end);
  const gap = /\s*\n[^\S\n]*\n\s*|^\s+|\s+$/g;
  let at = 0;
  for (const match of text.matchAll(gap)) {
    if (match[0].length === 0) continue;
    if (match.index > at) runs.push({ start: passage.start + at, end: passage.start + match.index, marked: true });
    runs.push({
      start: passage.start + match.index,
      end: passage.start + match.index + match[0].length,
      marked: false,
    });
    at = match.index + match[0].length;
  }
  if (at < text.length) runs.push({ start: passage.start + at, end: passage.end, marked: true });
  return runs;
}

/**
 * A document's text in a dialog; a PDF one page at a time. With a passage (a cited source), it opens
 * on the passage's page with the passage marked and scrolled into view. `domain`: the public domain
 * the document belongs to, null for the organization's private documents.
 */
export function DocumentDialog(props: {
  documentId: string;
  title: string;
  domain: string | null;
  passage?: Passage & { page: number | null };
  onDismiss: () => void;
}) {
  const { documentId, domain, passage } = props;
  const loaded = useResource(() => documents.get(documentId, domain), [documentId, domain]);
  const [pageNumber, setPageNumber] = useState(passage?.page ?? 1);
  const text = useRef<HTMLDivElement>(null);
  const firstMark = useRef<HTMLElement>(null);
  const content = loaded.data?.content;
  const pages = content === undefined ? [] : pagesOf(content, loaded.data?.content_type === 'application/pdf');
  const page = pages.at(Math.min(pageNumber, pages.length) - 1);

  // The passage's first line at the top of the text box (a passage can be taller than the box); a
  // page turned to starts at its top.
  useEffect(() => {
    if (!text.current) return;
    text.current.scrollTop = firstMark.current ? Math.max(0, firstMark.current.offsetTop - 16) : 0;
  }, [content, pageNumber]);

  return (
    <Dialog title={props.title} onDismiss={props.onDismiss}>
      <ErrorText error={loaded.error} />
      {loaded.loading && content === undefined && <p class="hint">Loading the document…</p>}
      {content !== undefined && page && (
        <>
          {pages.length > 1 && (
            <nav class="page-nav" aria-label="Pages">
              <button type="button" disabled={pageNumber <= 1} onClick={() => setPageNumber(pageNumber - 1)}>
                Previous page
              </button>
              <span aria-live="polite" data-testid="page-number">
                Page {pageNumber} of {pages.length}
              </span>
              <button type="button" disabled={pageNumber >= pages.length} onClick={() => setPageNumber(pageNumber + 1)}>
                Next page
              </button>
            </nav>
          )}
          <div
            ref={text}
            class="document-text"
            tabIndex={0}
            aria-label={pages.length > 1 ? `Text of page ${pageNumber}` : 'Document text'}
          >
            <PageText content={content} page={page} passage={passage} firstMark={firstMark} />
          </div>
        </>
      )}
      <div class="buttons">
        <button type="button" onClick={props.onDismiss} data-autofocus>
          Close
        </button>
      </div>
    </Dialog>
  );
}

/** The page's text, with the part of the passage that lies on it marked. */
function PageText({
  content,
  page,
  passage,
  firstMark,
}: {
  content: string;
  page: PageRange;
  passage: Passage | undefined;
  firstMark: { current: HTMLElement | null };
}) {
  const start = passage ? Math.max(passage.start, page.start) : page.end;
  const end = passage ? Math.min(passage.end, page.end) : page.end;
  if (start >= end) return <>{content.slice(page.start, page.end)}</>;
  const runs = passageRuns(content, { start, end });
  const firstMarked = runs.findIndex((run) => run.marked);
  return (
    <>
      {content.slice(page.start, start)}
      {runs.map((run, index) =>
        run.marked ? (
          <mark key={index} ref={index === firstMarked ? firstMark : undefined} class="passage">
            {content.slice(run.start, run.end)}
          </mark>
        ) : (
          content.slice(run.start, run.end)
        ),
      )}
      {content.slice(end, page.end)}
    </>
  );
}

/** The cited passage in its document; `domain` is the public domain searched, null for private documents. */
export function PassageDialog(props: { source: LocatedSource; domain: string | null; onDismiss: () => void }) {
  const { source } = props;
  return (
    <DocumentDialog
      documentId={source.document_id}
      title={source.title}
      domain={props.domain}
      passage={{ start: source.start, end: source.end, page: source.page }}
      onDismiss={props.onDismiss}
    />
  );
}
