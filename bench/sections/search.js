/** BM25 search latency over 10,000 generated documents (bench/search-latency.js), as a section. */
import { run as runSearch } from '../search-latency.js';

export const description = 'BM25 search p50/p95 over 10,000 generated documents (~50,000 chunks)';

export async function run(ctx) {
  const figures = await runSearch({ databaseUrl: (await ctx.createDatabase()).url, log: ctx.log });
  ctx.table('search: the retriever alone, top 10, one query at a time (target p50 < 20 ms, p95 < 50 ms)', [
    {
      queries: figures.latencyMs.count,
      'p50 ms': figures.latencyMs.p50,
      'p95 ms': figures.latencyMs.p95,
      'p99 ms': figures.latencyMs.p99,
    },
  ]);
  ctx.table(
    'search with a metadata filter: the same queries, filtered, in the same run (target p95 ≤ 1.5 × unfiltered)',
    [
      {
        queries: figures.filteredMs.count,
        'p50 ms': figures.filteredMs.p50,
        'p95 ms': figures.filteredMs.p95,
        'p99 ms': figures.filteredMs.p99,
        'p95 / unfiltered p95': figures.filteredOverUnfilteredP95,
      },
    ],
  );
  return figures;
}
