/**
 * The idempotency store under a flood (issue 19, item 1): one organization sends free
 * `POST /v1/search/`s, each with a fresh Idempotency-Key, from 8 connections for IDEM_FLOOD_SECONDS
 * (default 10) over documents with large metadata. Before the bounds this stored 1.84 MB per request
 * (255 MB in 10 s). Two floods with the default bounds (IDEMPOTENCY_ORG_BUDGET_MB 64,
 * IDEMPOTENCY_MAX_ANSWER_KB 256): `top_k: 100` (~800 KB answers, each over the largest kept) and
 * `top_k: 10` (~80 KB answers, kept until the budget is spent). Reported: what the answers sent would
 * have stored before (the baseline, measured in the same run), and what the organization holds after.
 */
import pg from 'pg';

export const description =
  'fresh Idempotency-Keys on large free searches from 8 connections: bytes stored per organization vs its budget';

const CONNECTIONS = 8;
const BUDGET_MB = 64;
/** What a row that keeps no answer still counts (200 bytes and its key), per request in flight. */
const SLACK_BYTES = CONNECTIONS * 300;

function heavyDocuments(from, count) {
  return Array.from({ length: count }, (_, i) => ({
    title: `Flood ${from + i}`,
    content: `Rotating keys, note ${from + i}: rotate a key from the dashboard before it expires.`,
    metadata: Object.fromEntries(
      Array.from({ length: 20 }, (_, j) => [`field${j}`, `${from + i}-${j}-`.padEnd(370, 'm')]),
    ),
  }));
}

async function storeOf(databaseUrl, email) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT coalesce((SELECT bytes FROM idempotency_usage WHERE organization_id = u.organization_id), 0)::bigint AS counted,
              (SELECT coalesce(sum(octet_length(response_body)), 0) FROM idempotency_keys k
                WHERE k.organization_id = u.organization_id)::bigint AS bodies,
              (SELECT count(*) FILTER (WHERE not_kept IS NULL) FROM idempotency_keys k
                WHERE k.organization_id = u.organization_id)::int AS kept,
              (SELECT count(*) FILTER (WHERE not_kept IS NOT NULL) FROM idempotency_keys k
                WHERE k.organization_id = u.organization_id)::int AS not_kept
         FROM users u WHERE u.email = $1`,
      [email.toLowerCase()],
    );
    return {
      counted: Number(rows[0].counted),
      bodies: Number(rows[0].bodies),
      kept: rows[0].kept,
      notKept: rows[0].not_kept,
    };
  } finally {
    await client.end();
  }
}

async function flood(ctx, user, topK, seconds) {
  const until = performance.now() + seconds * 1000;
  const tally = { answered: 0, 'refused 429': 0, other: 0, answerBytes: 0 };
  let n = 0;
  const connection = async () => {
    while (performance.now() < until) {
      const response = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/search/', {
        body: { query: 'rotate a key', top_k: topK },
        headers: { ...user.auth, 'Idempotency-Key': `flood-${topK}-${Date.now()}-${++n}` },
      });
      if (response.status === 200) {
        tally.answered++;
        tally.answerBytes += Buffer.byteLength(JSON.stringify(response.body));
      } else if (response.status === 429) tally['refused 429']++;
      else tally.other++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  return tally;
}

export async function run(ctx) {
  const seconds = ctx.seconds('IDEM_FLOOD_SECONDS', 10);
  const rows = [];
  const figures = {};
  for (const topK of [100, 10]) {
    // An organization of its own per flood: each starts with an empty store.
    const user = await ctx.signUp();
    for (let from = 0; from < 60; from += 30) {
      const batch = await ctx.call(ctx.service.baseUrl, 'POST', '/v1/documents/batch/', {
        body: { documents: heavyDocuments(from, 30) },
        headers: user.auth,
      });
      if (batch.status !== 201) throw new Error(`batch upload answered ${batch.status}`);
    }
    const tally = await flood(ctx, user, topK, seconds);
    const store = await storeOf(ctx.database.url, user.email);
    const budget = BUDGET_MB * 1024 * 1024;
    const within = store.counted <= budget + SLACK_BYTES && store.bodies <= budget;
    const row = {
      top_k: topK,
      'answers 200': tally.answered,
      'refused 429': tally['refused 429'],
      other: tally.other,
      'answer MB sent (stored before)': (tally.answerBytes / 1048576).toFixed(1),
      // A 200 whose row keeps no body was sent once and not kept (too large, or the budget was spent).
      'answers kept': store.kept,
      'not kept': store.notKept,
      'MB counted': (store.counted / 1048576).toFixed(2),
      'MB of bodies': (store.bodies / 1048576).toFixed(2),
      'budget MB': BUDGET_MB,
      verdict: within && tally.other === 0 ? 'within budget' : 'OVER',
    };
    rows.push(row);
    figures[`top_k_${topK}`] = { ...tally, store, within };
    if (!within || tally.other > 0) {
      ctx.table('idempotency store under a flood (one organization, 8 connections)', rows);
      throw new Error(`top_k ${topK}: ${JSON.stringify({ tally, store })}`);
    }
  }
  ctx.table(`idempotency store under a flood (one organization, 8 connections, ${seconds} s each)`, rows);
  return { seconds, connections: CONNECTIONS, budgetMb: BUDGET_MB, ...figures };
}
