import { formatNumber } from '../lib/format';

/** One page of a newest-first log: Newer / "1–20 of 57" / Older, stepping `pageSize` at a time. */
export function Pager({
  offset,
  pageSize,
  shown,
  count,
  hasOlder,
  onOffset,
}: {
  offset: number;
  pageSize: number;
  shown: number;
  count: number;
  hasOlder: boolean;
  onOffset: (offset: number) => void;
}) {
  return (
    <nav class="button-row pager" aria-label="Activity pages">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Newer
      </button>
      <span class="hint">
        {offset + 1}–{offset + shown} of {count}
      </span>
      <button type="button" disabled={!hasOlder} onClick={() => onOffset(offset + pageSize)}>
        Older
      </button>
    </nav>
  );
}

/**
 * One page of a paginated list (`{count, next, previous, results}`): Previous / "1–20 of 57" / Next,
 * stepping `pageSize` at a time; nothing when the list fits one page.
 */
export function PageNav({
  label,
  offset,
  pageSize,
  page,
  onOffset,
}: {
  label: string;
  offset: number;
  pageSize: number;
  page: { count: number; next: string | null; previous: string | null; results: readonly unknown[] } | undefined;
  onOffset: (offset: number) => void;
}) {
  if (!page || page.count <= pageSize) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={!page.previous} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Previous
      </button>
      <span>
        {offset + 1}–{offset + page.results.length} of {formatNumber(page.count)}
      </span>
      <button type="button" disabled={!page.next} onClick={() => onOffset(offset + pageSize)}>
        Next
      </button>
    </nav>
  );
}
