import type { Source } from '../api/types';

/** The passages an answer cites, best first. */
export function Sources({ sources }: { sources: Source[] }) {
  if (sources.length === 0) return <p class="hint">No sources were found for this answer.</p>;
  return (
    <section class="sources" aria-label="Sources">
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
            <blockquote>{source.snippet}</blockquote>
            {source.metadata && Object.keys(source.metadata).length > 0 && (
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
    </section>
  );
}
