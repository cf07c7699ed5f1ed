import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { DailyUsage } from '../api/types';
import { formatDay, formatNumber } from '../lib/format';

const DAY_MS = 86_400_000;

/** Every UTC day of the period [start, end), so days without use show as zero. */
export function periodDays(start: string, end: string): string[] {
  const first = new Date(start);
  const stop = new Date(end).getTime();
  const days: string[] = [];
  for (
    let day = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
    day < stop && days.length < 400;
    day += DAY_MS
  ) {
    days.push(new Date(day).toISOString().slice(0, 10));
  }
  return days;
}

/** 1, 2 or 5 times a power of ten: a round top for the y axis. */
function niceCeiling(value: number): number {
  if (value <= 5) return 5;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5].map((f) => f * power).find((candidate) => candidate >= value) ?? 10 * power;
}

/** The element's width in CSS pixels, kept up to date: charts draw at it, so their text is never scaled down. */
export function useWidth<T extends HTMLElement = HTMLDivElement>(fallback: number) {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    setWidth(element.clientWidth || fallback);
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(entry.contentRect.width, 200)));
    observer.observe(element);
    return () => observer.disconnect();
  }, [fallback]);
  return { ref, width };
}

/** Credits per day as plain SVG bars, with the same numbers in a table for screen readers. */
export function UsageChart({
  usage,
  periodStart,
  periodEnd,
}: {
  usage: DailyUsage[];
  periodStart: string;
  periodEnd: string;
}) {
  const { ref, width } = useWidth(640);
  const titleId = useId();
  const descId = useId();
  const byDay = new Map(usage.map((entry) => [entry.date, entry.credits]));
  const days = [...new Set([...periodDays(periodStart, periodEnd), ...byDay.keys()])].sort();
  const values = days.map((day) => byDay.get(day) ?? 0);
  const total = values.reduce((sum, value) => sum + value, 0);
  const peak = Math.max(0, ...values);
  const top = niceCeiling(peak);

  const height = 200;
  const margin = { top: 12, right: 8, bottom: 28, left: 44 };
  const plotWidth = Math.max(width - margin.left - margin.right, 10);
  const plotHeight = height - margin.top - margin.bottom;
  const step = plotWidth / Math.max(days.length, 1);
  const barWidth = Math.max(step * 0.7, 1);
  const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(1, Math.floor(plotWidth / 52))));
  const y = (value: number) => margin.top + plotHeight - (value / top) * plotHeight;
  const peakDay = days[values.indexOf(peak)];
  const description =
    total === 0
      ? 'No credits used yet this period.'
      : `${formatNumber(total)} credits over ${days.length} days; the most on ${formatDay(peakDay)}: ${formatNumber(peak)}.`;

  return (
    <figure class="chart">
      <div ref={ref} class="chart-canvas">
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-labelledby={`${titleId} ${descId}`}
        >
          <title id={titleId}>Credits used per day this period</title>
          <desc id={descId}>{description}</desc>
          {[0, top / 2, top].filter(Number.isInteger).map((tick) => (
            <g key={tick} class="chart-grid">
              <line x1={margin.left} x2={width - margin.right} y1={y(tick)} y2={y(tick)} />
              <text x={margin.left - 6} y={y(tick) + 4} text-anchor="end">
                {formatNumber(tick)}
              </text>
            </g>
          ))}
          {days.map((day, index) => {
            const value = values[index];
            const x = margin.left + index * step + (step - barWidth) / 2;
            return (
              <g key={day}>
                {value > 0 && (
                  <rect
                    class="chart-bar"
                    x={x}
                    y={y(value)}
                    width={barWidth}
                    height={y(0) - y(value)}
                    rx={Math.min(2, barWidth / 3)}
                  >
                    <title>{`${formatDay(day)}: ${formatNumber(value)} credits`}</title>
                  </rect>
                )}
                {index % labelEvery === 0 && (
                  <text class="chart-label" x={x + barWidth / 2} y={height - 8} text-anchor="middle">
                    {formatDay(day)}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption class="hint">{description}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <table class="compact-table">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {total === 0 && (
              <tr>
                <td colSpan={2}>No credits used yet.</td>
              </tr>
            )}
            {days
              .filter((_, index) => values[index] > 0)
              .map((day) => (
                <tr key={day}>
                  <td>{formatDay(day)}</td>
                  <td>{formatNumber(byDay.get(day) ?? 0)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
