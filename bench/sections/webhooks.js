/**
 * Webhooks (issue 25): 10,000 `document.indexed` events, caused by real uploads spread over two
 * instances on one database, delivered to a local receiver by both instances' delivery workers.
 *
 * Figures: uploads per second with no endpoint (the baseline, same run) and with one subscribed (what
 * the outbox trigger costs the write path), deliveries per second, event-to-delivery latency (the
 * event's `timestamp`, written in the upload's transaction, to the receiver's arrival; one machine, one
 * clock), and duplicates (a `webhook-id` received twice) and missing events, which must both be 0.
 * A sample of deliveries is verified with the standardwebhooks package.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

export const description = '10,000 events delivered by two instances: throughput, p99 event-to-delivery, duplicates';
export const explicitOnly = true;

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const BASELINE_UPLOADS = Math.min(2_000, EVENTS);
const CLIENTS = 16;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function startReceiver() {
  const arrivals = [];
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      arrivals.push({ at: Date.now(), headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { arrivals, url: `http://127.0.0.1:${server.address().port}/hooks`, close: () => server.close() };
}

/** `count` uploads by `CLIENTS` concurrent clients, alternating between the instances; uploads per second. */
async function upload(ctx, instances, user, count, label) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = next++; i < count; i = next++) {
        const baseUrl = instances[(client + i) % instances.length].baseUrl;
        const response = await ctx.call(baseUrl, 'POST', '/v1/documents/', {
          body: { title: `${label} ${i}`, content: `Webhook bench document ${i}: refunds are due within 30 days.` },
          headers: user.auth,
        });
        if (response.status !== 201) throw new Error(`upload answered ${response.status}`);
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

export async function run(ctx) {
  const receiver = await startReceiver();
  const database = await ctx.createDatabase();
  // Both instances must share the key that encrypts the endpoints' secrets (and the JWT secret).
  const env = {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '100000000',
  };
  const first = await ctx.startService({ databaseUrl: database.url, env });
  const second = await ctx.startService({ databaseUrl: database.url, env });
  const instances = [first, second];
  try {
    const user = await ctx.signUp(first.baseUrl);
    // The baseline: another organization, with no endpoint, after a warm-up of both instances.
    const other = await ctx.signUp(first.baseUrl);
    await upload(ctx, instances, other, 1_000, 'warm-up');
    const baselineRate = await upload(ctx, instances, other, BASELINE_UPLOADS, 'baseline');
    const endpoint = await ctx.call(first.baseUrl, 'POST', '/v1/webhooks/', {
      body: { url: receiver.url, events: ['document.indexed'] },
      headers: user.auth,
    });
    if (endpoint.status !== 201) throw new Error(`endpoint create answered ${endpoint.status}`);
    ctx.log(`uploading ${EVENTS} documents with an endpoint subscribed`);
    const started = Date.now();
    const withEndpointRate = await upload(ctx, instances, user, EVENTS, 'event');
    const deadline = Date.now() + 120_000;
    while (new Set(receiver.arrivals.map((a) => a.headers['webhook-id'])).size < EVENTS && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    // Late duplicates would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const lastArrival = Math.max(...receiver.arrivals.map((a) => a.at));

    const ids = new Map();
    const latencies = [];
    for (const arrival of receiver.arrivals) {
      const id = arrival.headers['webhook-id'];
      ids.set(id, (ids.get(id) ?? 0) + 1);
      if (ids.get(id) === 1) latencies.push(arrival.at - Date.parse(JSON.parse(arrival.body).timestamp));
    }
    const verifier = new Webhook(endpoint.body.secret);
    const sample = receiver.arrivals.filter((_, i) => i % 100 === 0);
    for (const arrival of sample) verifier.verify(arrival.body, arrival.headers);
    latencies.sort((a, b) => a - b);
    const duplicates = [...ids.values()].reduce((sum, n) => sum + n - 1, 0);
    const figures = {
      events: EVENTS,
      received: receiver.arrivals.length,
      distinct: ids.size,
      missing: EVENTS - ids.size,
      duplicates,
      'uploads/s, no endpoint (baseline)': Math.round(baselineRate),
      'uploads/s, endpoint subscribed': Math.round(withEndpointRate),
      'upload rate ratio': +(withEndpointRate / baselineRate).toFixed(2),
      'deliveries/s (first upload to last arrival)': Math.round(ids.size / ((lastArrival - started) / 1000)),
      'event→delivery p50 ms': percentile(latencies, 50),
      'event→delivery p99 ms': percentile(latencies, 99),
      'event→delivery max ms': latencies.at(-1),
      'signatures verified (sample)': sample.length,
    };
    ctx.table('Webhooks: two instances, one database, one local receiver', [figures]);
    if (duplicates !== 0 || ids.size !== EVENTS)
      throw new Error(`duplicates ${duplicates}, missing ${EVENTS - ids.size}`);
    return figures;
  } finally {
    receiver.close();
  }
}
