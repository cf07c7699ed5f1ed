/**
 * Retrieval quality on SciFact through the API (bench/scifact.js), as a section of `npm run bench`.
 * Runs on its own instance: it needs an administrator (to create the `scifact` domain) and enough
 * credits for the 809 metered queries.
 */
import { randomBytes } from 'node:crypto';
import { run as runSciFact } from '../scifact.js';

export const description = 'SciFact nDCG@10 and recall@100 through POST /v1/query/, and ingestion MB/s';

export async function run(ctx) {
  const admin = { email: 'bench-admin@example.com', password: randomBytes(12).toString('base64url') };
  const service = await ctx.startService({
    databaseUrl: (await ctx.createDatabase()).url,
    env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, DEFAULT_MONTHLY_CREDITS: '100000' },
  });
  const tokens = await ctx.call(service.baseUrl, 'POST', '/auth/jwt/create/', { body: admin });
  if (tokens.status !== 200) throw new Error(`admin sign-in answered ${tokens.status}`);
  const figures = await runSciFact({
    baseUrl: service.baseUrl,
    adminAuth: { Authorization: `Bearer ${tokens.body.access}` },
    log: ctx.log,
  });
  ctx.table('scifact: BEIR SciFact, 809 training queries, through POST /v1/query/ (top_k 100)', [
    {
      ranker: 'this service (BM25 in PostgreSQL, no model)',
      'nDCG@10': figures.ndcgAt10.toFixed(4),
      'recall@100': figures.recallAt100.toFixed(4),
      split: 'train (809)',
    },
    { ranker: 'BM25, BEIR paper (published)', 'nDCG@10': '0.665', 'recall@100': '', split: 'test (300)' },
    { ranker: 'BM25, Anserini flat (published)', 'nDCG@10': '0.679', 'recall@100': '0.925', split: 'test (300)' },
  ]);
  return figures;
}
