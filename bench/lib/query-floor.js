import pg from 'pg';
import { summarize } from './load.js';

/** Which of the service's statements a SQL text is (for the per-statement breakdown). */
function kindOf(sql) {
  if (sql.includes('FOR UPDATE') && sql.includes('usage_events')) return 'credit spend';
  if (sql.includes('FROM term_stats')) return 'plan (terms, df)';
  if (sql.includes('ts_filter')) return 'ranking round';
  if (sql.includes('ts_headline')) return 'present (snippets)';
  return 'other';
}

/**
 * The database work of one POST /v1/query/, without the service around it: the built QuotaService
 * (credit spend, with its group commit) and Bm25Retriever (plan, ranking rounds, snippets) from
 * dist/, constructed over a bare `pg.Pool` of `poolSize` connections instead of TypeORM, so the
 * statements, their parameters and their order are exactly the service's, and nothing else runs:
 * no HTTP, no Nest, no authentication, no answerer. `one()` spends and searches as QueryService
 * does; `measure()` runs it closed loop at a given concurrency.
 */
export async function createQueryFloor({ databaseUrl, poolSize, principal, question, creditCost = 1 }) {
  const { Bm25Retriever } = await import('../../dist/retrieval/bm25.retriever.js');
  const { SearchIndexRepository } = await import('../../dist/retrieval/search-index.repository.js');
  const { DirectReads } = await import('../../dist/database/direct-reads.js');
  const { QuotaService } = await import('../../dist/billing/quota.service.js');
  const { SubscriptionsRepository } = await import('../../dist/billing/subscriptions.repository.js');
  // The service's own result parsing (dates stay strings, int8 becomes a number): same rows, same code.
  const { installPgTypeParsers } = await import('../../dist/database/pg-types.js');
  installPgTypeParsers();
  // As the service's pool (database.ts): no JIT.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, options: '-c jit=off' });
  const statements = new Map();
  // Time inside each statement, the connection held, by kind (see kindOf).
  function record(sql, started) {
    const kind = kindOf(sql);
    const entry = statements.get(kind) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += performance.now() - started;
    statements.set(kind, entry);
  }
  const database = {
    // TypeORM's DataSource.query answers a SELECT (and these WITH ... SELECTs) with the rows.
    query: async (sql, parameters) => {
      const client = await pool.connect();
      const started = performance.now();
      try {
        return (await client.query(sql, parameters)).rows;
      } finally {
        record(sql, started);
        client.release();
      }
    },
  };
  // The reads the service runs straight on its pool (DirectReads, the named ones prepared), likewise here.
  const reads = DirectReads.over({
    connect: async () => {
      const client = await pool.connect();
      return {
        query: async (config) => {
          const started = performance.now();
          try {
            return await client.query(config);
          } finally {
            record(config.text, started);
          }
        },
        release: (error) => client.release(error),
      };
    },
  });
  const retriever = new Bm25Retriever(new SearchIndexRepository(reads));
  const quota = new QuotaService(new SubscriptionsRepository(database), { QUERY_CREDIT_COST: creditCost });
  // The organization's `default` collection, whose id is the organization's.
  const corpus = { collectionIds: [principal.organizationId] };

  async function one() {
    await quota.spend(principal, 'query', null);
    return retriever.search(question.query, corpus, { limit: question.top_k ?? 5 });
  }

  async function measure({ concurrency, seconds }) {
    statements.clear();
    const latencies = [];
    let errors = 0;
    const started = performance.now();
    const until = started + seconds * 1000;
    const worker = async () => {
      while (performance.now() < until) {
        const begun = performance.now();
        try {
          await one();
          latencies.push(performance.now() - begun);
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const completed = latencies.length;
    return {
      requestsPerSecond: Math.round(completed / elapsed),
      completed,
      errors,
      latencyMs: summarize(latencies),
      // Time inside each kind of statement (connection held), per query: where the floor's time goes.
      perQuery: Object.fromEntries(
        [...statements].map(([kind, { count, ms }]) => [
          kind,
          { statements: Math.round((count / completed) * 100) / 100, ms: Math.round((ms / completed) * 100) / 100 },
        ]),
      ),
      concurrency,
      poolSize,
    };
  }

  return { one, measure, close: () => pool.end() };
}
