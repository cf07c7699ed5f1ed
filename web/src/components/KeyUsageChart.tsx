import { useId } from 'preact/hooks';
import type { KeyUsage } from '../api/types';
import { formatNumber } from '../lib/format';
import { useWidth } from './UsageChart';

/** How many keys the chart draws; the table below it lists every one. */
const CHART_ROWS = 8;

/** The row's label: the key's name and prefix, or the signed-in users' row. */
export function keyUsageLabel(row: KeyUsage): string {
  return row.key_id === null ? 'Signed in (JWT)' : `${row.name ?? ''} (${row.key_prefix ?? ''}…)`;
}

/**
 * Credits per key this period: horizontal SVG bars of the keys that spent the most (role="img" with
 * a description), then the whole list as a table, so the numbers never depend on the drawing.
 */
export function KeyUsageChart({ rows }: { rows: KeyUsage[] }) {
  const titleId = useId();
  const descId = useId();
  const spenders = rows.filter((row) => row.credits > 0).slice(0, CHART_ROWS);
  const peak = Math.max(1, ...spenders.map((row) => row.credits));
  const total = rows.reduce((sum, row) => sum + row.credits, 0);
  const top = spenders[0];
  const description =
    total === 0
      ? 'No credits used yet this period.'
      : `${formatNumber(total)} credits this period; the most by ${keyUsageLabel(top)}: ${formatNumber(top.credits)}.`;

  // Drawn at the width it is shown at (never wider than 640 px), so a phone gets 12 px text, not 6 px.
  const { ref, width: available } = useWidth<HTMLElement>(640);
  const width = Math.min(available, 640);
  const rowHeight = 28;
  const labelWidth = Math.min(220, Math.round(width * 0.5));
  const labelChars = Math.max(8, Math.floor(labelWidth / 7.5));
  const height = Math.max(spenders.length, 1) * rowHeight + 8;
  const barSpace = width - labelWidth - 60;

  return (
    <figure ref={ref} class="chart key-usage">
      {spenders.length > 0 && (
        <div class="chart-canvas">
          <svg
            viewBox={`0 0 ${width} ${height}`}
            width={width}
            height={height}
            role="img"
            aria-labelledby={`${titleId} ${descId}`}
          >
            <title id={titleId}>Credits per key this period</title>
            <desc id={descId}>{description}</desc>
            {spenders.map((row, index) => {
              const y = 4 + index * rowHeight;
              const barWidth = Math.max(2, (row.credits / peak) * barSpace);
              return (
                <g key={row.key_id ?? 'jwt'}>
                  <text x={labelWidth - 8} y={y + 17} text-anchor="end" class="chart-label">
                    {truncate(keyUsageLabel(row), labelChars)}
                  </text>
                  <rect class="key-usage-bar" x={labelWidth} y={y + 4} width={barWidth} height={rowHeight - 10} rx={2}>
                    <title>{`${keyUsageLabel(row)}: ${formatNumber(row.credits)} credits`}</title>
                  </rect>
                  <text x={labelWidth + barWidth + 6} y={y + 17}>
                    {formatNumber(row.credits)}
                  </text>
                </g>
              );
            })}
          </svg>
        </div>
      )}
      <figcaption class="hint">{description}</figcaption>
      <table class="responsive-table key-usage-table">
        <caption class="visually-hidden">Requests and credits per key this period, most credits first</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Prefix</th>
            <th scope="col" class="numeric">
              Requests
            </th>
            <th scope="col" class="numeric">
              Credits
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key_id ?? 'jwt'} data-key-id={row.key_id ?? 'jwt'}>
              <th scope="row" data-label="Key">
                {row.key_id === null ? 'Signed in (JWT)' : row.name}
              </th>
              <td data-label="Prefix">{row.key_prefix ? <code>{row.key_prefix}…</code> : '—'}</td>
              <td data-label="Requests" class="numeric" data-field="requests">
                {formatNumber(row.requests)}
              </td>
              <td data-label="Credits" class="numeric" data-field="credits">
                {formatNumber(row.credits)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
