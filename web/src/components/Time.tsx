import { formatDate, formatDateTime } from '../lib/format';

export function Time({ iso, dateOnly = false }: { iso: string; dateOnly?: boolean }) {
  return (
    <time dateTime={iso} title={iso}>
      {dateOnly ? formatDate(iso) : formatDateTime(iso)}
    </time>
  );
}
