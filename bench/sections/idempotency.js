/**
 * Idempotent POSTs (issue 10): the same Idempotency-Key sent by 50 concurrent clients, half to each of
 * two instances on one database, must run the query exactly once and charge one credit. The others
 * get 409 (still running) or the replay; a second wave, after the first answered, is all replays.
 */
import { creditsUsed } from '../lib/quota.js';

export const description =
  'the same Idempotency-Key from 50 concurrent clients on two instances: one execution, one credit';

const CONCURRENT = 50;

export async function run(ctx) {
  const other = await ctx.startService({ databaseUrl: ctx.database.url });
  const instances = [ctx.service.baseUrl, other.baseUrl];
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, 'idempotency bench');
  const document = { title: 'Retry handbook', content: 'A retried query with the same key is answered once.' };
  const created = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/documents/', { body: document, headers: user.auth });
  if (created.status !== 201) throw new Error(`document upload answered ${created.status}`);

  const idempotencyKey = `bench-${Date.now()}`;
  const wave = () =>
    Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        ctx.call(instances[i % 2], 'POST', '/v1/query/', {
          body: { query: 'What happens to a retried query?' },
          headers: { 'X-API-Key': key.key, 'Idempotency-Key': idempotencyKey },
        }),
      ),
    );
  const count = (responses) => {
    const tally = { executed: 0, replayed: 0, 'in progress (409)': 0, other: 0 };
    for (const response of responses) {
      if (response.status === 200 && response.headers.get('idempotent-replayed') === 'true') tally.replayed++;
      else if (response.status === 200) tally.executed++;
      else if (response.status === 409) tally['in progress (409)']++;
      else tally.other++;
    }
    return tally;
  };

  const started = performance.now();
  const first = count(await wave());
  const firstMs = Math.round(performance.now() - started);
  const second = count(await wave());
  const stored = await creditsUsed(ctx.database.url, user.email);
  const exact =
    first.executed === 1 &&
    first.other === 0 &&
    second.replayed === CONCURRENT &&
    stored.creditsUsed === 1 &&
    stored.ledgerLines === 1;
  ctx.table('idempotency: one key from 50 concurrent clients (two instances, one database)', [
    { wave: 'at once', ...first, ms: firstMs },
    { wave: 'after', ...second, ms: '' },
  ]);
  ctx.table('idempotency: what was charged', [
    {
      'credits_used stored': stored.creditsUsed,
      'ledger lines': stored.ledgerLines,
      verdict: exact ? 'exact' : 'WRONG',
    },
  ]);
  if (!exact)
    throw new Error(
      `executed ${first.executed} time(s), charged ${stored.creditsUsed}; waves ${JSON.stringify([first, second])}`,
    );
  return { concurrent: CONCURRENT, instances: 2, first, second, stored, firstMs };
}
