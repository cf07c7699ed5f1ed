/** Median and range of a few repeated measurements (the sections run each figure BENCH_RUNS times). */
export function spread(values, digits = 2) {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (value) => Math.round(value * 10 ** digits) / 10 ** digits;
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {
    median: round(median),
    min: round(sorted[0]),
    max: round(sorted[sorted.length - 1]),
    values: values.map(round),
  };
}

/** `median (min–max)` for a table cell. */
export function showSpread({ median, min, max }, digits = 2) {
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

/** How many times each figure is measured: BENCH_RUNS, default 3. */
export function runCount() {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`BENCH_RUNS must be a positive integer, not ${process.env.BENCH_RUNS}`);
  return runs;
}

/** Seconds per measured run: BENCH_SECONDS (default 10). Shorter runs are for checking the code, not for figures. */
export function benchSeconds(ctx, log) {
  const seconds = ctx.seconds('BENCH_SECONDS', 10);
  if (!(seconds > 0)) throw new Error(`BENCH_SECONDS must be positive, not ${process.env.BENCH_SECONDS}`);
  if (seconds < 10)
    log(`BENCH_SECONDS=${seconds}: runs shorter than 10 s check that the code works; do not publish their figures`);
  return seconds;
}
