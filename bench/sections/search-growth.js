/**
 * How search cost grows (issue 9): bench/search-growth.js as a section, on a database of its own.
 * Sizes from BENCH_GROWTH_DOCS (default 10000,200000 documents: ~50k and ~1M chunks; the full size
 * loads about 2 GB of text, so the section runs only when named). See search-growth.js for the env.
 */
import { growthSettings, run as runGrowth, tables } from '../search-growth.js';

export const description =
  'search p50/p95 at ~50k and ~1M chunks (BENCH_GROWTH_DOCS), p95 growth, index size on disk and in memory';
export const explicitOnly = true;

export async function run(ctx) {
  const settings = growthSettings();
  ctx.log(
    `sizes ${settings.sizes.join(', ')} documents, ${settings.queryCount} queries per size, load concurrency ${settings.loadConcurrency}`,
  );
  const database = await ctx.createDatabase();
  ctx.log(`corpus database ${database.name} (kept with BENCH_KEEP_DATABASE=1, for bench/growth-compare.js)`);
  const figures = await runGrowth({ databaseUrl: database.url, settings, log: ctx.log });
  tables(figures, ctx.table);
  return figures;
}
