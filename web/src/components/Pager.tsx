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
