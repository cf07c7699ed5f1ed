import { useEffect, useRef } from 'preact/hooks';
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

/** The cited passage in its document; `domain` is the public domain searched, null for private documents. */
export function PassageDialog(props: { source: LocatedSource; domain: string | null; onDismiss: () => void }) {
  const { source, domain } = props;
  const loaded = useResource(() => documents.get(source.document_id, domain), [source.document_id, domain]);
  const text = useRef<HTMLDivElement>(null);
  const passage = useRef<HTMLElement>(null);
  const content = loaded.data?.content;
  // The passage's first line at the top of the text box (a passage can be taller than the box).
  useEffect(() => {
    if (text.current && passage.current) text.current.scrollTop = Math.max(0, passage.current.offsetTop - 16);
  }, [content]);

  return (
    <Dialog title={source.title} onDismiss={props.onDismiss}>
      {source.page !== null && <p class="hint">Page {source.page}</p>}
      <ErrorText error={loaded.error} />
      {loaded.loading && !content && <p class="hint">Loading the document…</p>}
      {content !== undefined && (
        <div ref={text} class="document-text" tabIndex={0} aria-label="Document text">
          {content.slice(0, source.start)}
          <mark ref={passage} class="passage">
            {content.slice(source.start, source.end)}
          </mark>
          {content.slice(source.end)}
        </div>
      )}
      <div class="buttons">
        <button type="button" onClick={props.onDismiss} data-autofocus>
          Close
        </button>
      </div>
    </Dialog>
  );
}
