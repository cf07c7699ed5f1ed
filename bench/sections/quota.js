/**
 * Quota under load (issue 3): 200 concurrent POST /v1/query/ against 50 remaining credits must spend
 * exactly 50: 50 answers, 150 refusals with 402, and a ledger of 50 lines.
 */
import { creditsUsed, setCredits } from '../lib/quota.js';

export const description = '200 concurrent queries against 50 remaining credits spend exactly 50';

const CONCURRENT = 200;
const CREDITS = 50;

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'quota bench');
  const document = {
    title: 'Quota handbook',
    content: 'Each query costs one credit from the monthly quota of the organization.',
  };
  const created = await ctx.call(baseUrl, 'POST', '/v1/documents/', { body: document, headers: user.auth });
  if (created.status !== 201) throw new Error(`document upload answered ${created.status}`);
  await setCredits(ctx.database.url, user.email, CREDITS);

  const started = performance.now();
  const responses = await Promise.all(
    Array.from({ length: CONCURRENT }, () =>
      ctx.call(baseUrl, 'POST', '/v1/query/', {
        body: { query: 'How much does a query cost?' },
        headers: { 'X-API-Key': key.key },
      }),
    ),
  );
  const elapsedMs = Math.round(performance.now() - started);
  const statuses = {};
  for (const response of responses) statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  const stored = await creditsUsed(ctx.database.url, user.email);
  const exact =
    statuses[200] === CREDITS &&
    statuses[402] === CONCURRENT - CREDITS &&
    stored.creditsUsed === CREDITS &&
    stored.ledgerLines === CREDITS;
  ctx.table('quota: concurrent queries against the remaining credits', [
    {
      requests: CONCURRENT,
      'credits left': CREDITS,
      'answered 200': statuses[200] ?? 0,
      'refused 402': statuses[402] ?? 0,
      other: CONCURRENT - (statuses[200] ?? 0) - (statuses[402] ?? 0),
      'credits_used stored': stored.creditsUsed,
      'ledger lines': stored.ledgerLines,
      ms: elapsedMs,
      verdict: exact ? 'exact' : 'WRONG',
    },
  ]);
  if (!exact)
    throw new Error(`spent ${stored.creditsUsed} of ${CREDITS} credits; statuses ${JSON.stringify(statuses)}`);
  return { concurrent: CONCURRENT, credits: CREDITS, statuses, stored, elapsedMs };
}
