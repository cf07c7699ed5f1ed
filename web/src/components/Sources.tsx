import { useState } from 'preact/hooks';
import type { Source } from '../api/types';
import { useStore } from '../lib/store';
import { currentUser } from '../state';
import { isLocated, type LocatedSource, PassageDialog } from './PassageDialog';

/** The search marks the matched words as **word** in snippets: shown highlighted, never as HTML. */
function Highlighted({ text }: { text: string }) {
  const parts = text.split(/\*\*(.+?)\*\*/g); // odd indexes are the marked words
  return <>{parts.map((part, index) => (index % 2 === 1 ? <mark key={index}>{part}</mark> : part))}</>;
}

/**
 * The passages an answer cites, best first; a located one opens in its document (a public domain's
 * documents are readable by admins only). `domain`: the public domain searched, null for private documents.
 */
export function Sources({ sources, domain }: { sources: Source[]; domain: string | null }) {
  const user = useStore(currentUser);
  const [opened, setOpened] = useState<LocatedSource | null>(null);
  const readable = domain === null || user?.is_admin === true;
  if (sources.length === 0) return <p class="hint">No sources were found for this answer.</p>;
  return (
    // Not a labelled section: one region landmark per answer would all be called "Sources".
    <div class="sources">
      <h3>Sources</h3>
      <ol>
        {sources.map((source) => (
          <li key={source.chunk_id} class="source">
            <div class="source-head">
              <strong class="source-title">{source.title}</strong>
              <span class="score" title="Relevance score">
                score {source.score.toFixed(2)}
              </span>
            </div>
            <blockquote>
              <Highlighted text={source.snippet} />
            </blockquote>
            {readable && isLocated(source) && (
              <button type="button" class="link" onClick={() => setOpened(source)}>
                Show in document{source.page !== null ? ` (page ${source.page})` : ''}
              </button>
            )}
            {Object.keys(source.metadata).length > 0 && (
              <dl class="metadata">
                {Object.entries(source.metadata).map(([name, value]) => (
                  <div key={name}>
                    <dt>{name}</dt>
                    <dd>{String(value)}</dd>
                  </div>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
      {opened && <PassageDialog source={opened} domain={domain} onDismiss={() => setOpened(null)} />}
    </div>
  );
}
