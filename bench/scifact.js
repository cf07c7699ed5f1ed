/**
 * Retrieval quality on BEIR's SciFact (training split), end to end through the API: the corpus is
 * ingested with POST /v1/domains/scifact/documents/ (title + text, metadata {corpus_id}), the 809
 * training claims go through POST /v1/query/ {query, domain: "scifact", top_k: 100}, and nDCG@10 and
 * recall@100 are computed from qrels-train.tsv (binary relevance, as pytrec_eval does for BEIR).
 * Also reports the ingestion rate (MB of title + text per second, 10^6 bytes) through the API.
 *
 * Standalone:  flock /tmp/bench.lock node bench/scifact.js
 *   builds dist/, starts `node dist/main.js` on a fresh PostgreSQL database (bench/lib), runs, cleans up.
 *   Options: --no-build, --concurrency=N (parallel requests, default 8).
 * As a section of another script:
 *   import { run } from './scifact.js';
 *   await run({ baseUrl, adminAuth: { Authorization: 'Bearer <admin access token>' } });
 *   The service needs an admin, DEFAULT_MONTHLY_CREDITS >= 809 (the queries are metered) and a
 *   RATE_LIMIT_PER_MINUTE far above 6,000 (5,183 uploads and 809 queries within minutes).
 *   A domain named `scifact` is deleted and recreated.
 *
 * The data is read from ../shared/data/scifact/ (override with SCIFACT_DIR); it is never copied here.
 * Tuning used only these training queries; BEIR's test split is held out.
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pool, readJsonLines } from './lib/data.js';

export const description = 'SciFact retrieval quality (nDCG@10, recall@100) and ingestion rate through the API';

const DATA_DIR = process.env.SCIFACT_DIR ?? fileURLToPath(new URL('../../shared/data/scifact/', import.meta.url));
const PUBLISHED = { 'BM25, BEIR paper': 0.665, 'BM25, Anserini flat': 0.679 };

function readQrels() {
  const qrels = new Map();
  for (const line of readFileSync(`${DATA_DIR}/qrels-train.tsv`, 'utf8').split('\n').slice(1)) {
    if (!line.trim()) continue;
    const [queryId, corpusId, score] = line.split('\t');
    if (!qrels.has(queryId)) qrels.set(queryId, new Map());
    qrels.get(queryId).set(corpusId, Number(score));
  }
  return qrels;
}

async function request(baseUrl, method, path, auth, body) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function expectStatus(promise, status, what) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** nDCG@k with graded (here binary) relevance, the ideal ranking taken from the judgements. */
export function ndcgAt(k, ranked, relevant) {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => (dcg += (relevant.get(id) ?? 0) / Math.log2(i + 2)));
  const ideal = [...relevant.values()]
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

export function recallAt(k, ranked, relevant) {
  const positive = [...relevant].filter(([, gain]) => gain > 0).map(([id]) => id);
  if (positive.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return positive.filter((id) => top.has(id)).length / positive.length;
}

export async function run({ baseUrl, adminAuth, log = (m) => console.log(`[scifact] ${m}`), concurrency = 8 }) {
  const corpus = readJsonLines(`${DATA_DIR}/corpus.jsonl`);
  const queries = readJsonLines(`${DATA_DIR}/queries-train.jsonl`);
  const qrels = readQrels();

  const existing = await request(baseUrl, 'DELETE', '/v1/domains/scifact/', adminAuth);
  if (existing.status !== 204 && existing.status !== 404) throw new Error(`delete old domain: ${existing.status}`);
  await expectStatus(
    request(baseUrl, 'POST', '/v1/domains/', adminAuth, { name: 'SciFact', slug: 'scifact' }),
    201,
    'create domain',
  );

  log(`ingesting ${corpus.length} documents with ${concurrency} parallel requests`);
  const bytes = corpus.reduce((sum, doc) => sum + Buffer.byteLength(doc.title) + Buffer.byteLength(doc.text), 0);
  const ingestStarted = performance.now();
  await pool(corpus, concurrency, (doc) =>
    expectStatus(
      request(baseUrl, 'POST', '/v1/domains/scifact/documents/', adminAuth, {
        title: doc.title,
        content: doc.text,
        metadata: { corpus_id: doc._id },
      }),
      201,
      `ingest ${doc._id}`,
    ),
  );
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;

  log(`running ${queries.length} training queries (top_k 100)`);
  const latencies = [];
  const queryStarted = performance.now();
  const rankings = await pool(queries, concurrency, async (query) => {
    const started = performance.now();
    const body = await expectStatus(
      request(baseUrl, 'POST', '/v1/query/', adminAuth, { query: query.text, domain: 'scifact', top_k: 100 }),
      200,
      `query ${query._id}`,
    );
    latencies.push(performance.now() - started);
    return body.sources.map((source) => String(source.metadata.corpus_id));
  });
  const querySeconds = (performance.now() - queryStarted) / 1000;

  let ndcg = 0;
  let recall = 0;
  queries.forEach((query, i) => {
    const relevant = qrels.get(query._id) ?? new Map();
    ndcg += ndcgAt(10, rankings[i], relevant);
    recall += recallAt(100, rankings[i], relevant);
  });
  latencies.sort((a, b) => a - b);
  const round = (value, digits) => Math.round(value * 10 ** digits) / 10 ** digits;
  const figures = {
    documents: corpus.length,
    queries: queries.length,
    ndcgAt10: round(ndcg / queries.length, 4),
    recallAt100: round(recall / queries.length, 4),
    published: PUBLISHED,
    ingest: {
      megabytes: round(bytes / 1e6, 2),
      seconds: round(ingestSeconds, 1),
      mbPerSecond: round(bytes / 1e6 / ingestSeconds, 2),
      docsPerSecond: Math.round(corpus.length / ingestSeconds),
      concurrency,
    },
    queryHttp: {
      seconds: round(querySeconds, 1),
      p50Ms: round(percentile(latencies, 50), 1),
      p95Ms: round(percentile(latencies, 95), 1),
      concurrency,
    },
  };
  log(
    `nDCG@10 ${figures.ndcgAt10.toFixed(4)}   (BM25 published, SciFact test: BEIR paper ${PUBLISHED['BM25, BEIR paper']}, Anserini ${PUBLISHED['BM25, Anserini flat']}; ours is on the 809 training queries)`,
  );
  log(`recall@100 ${figures.recallAt100.toFixed(4)}`);
  log(
    `ingestion ${figures.ingest.megabytes} MB in ${figures.ingest.seconds} s = ${figures.ingest.mbPerSecond} MB/s (${figures.ingest.docsPerSecond} documents/s, ${concurrency} parallel requests)`,
  );
  log(
    `queries over HTTP (top_k 100, ${concurrency} parallel): p50 ${figures.queryHttp.p50Ms} ms, p95 ${figures.queryHttp.p95Ms} ms`,
  );
  return figures;
}

async function main() {
  const args = process.argv.slice(2);
  const concurrency = Number(args.find((arg) => arg.startsWith('--concurrency='))?.split('=')[1] ?? 8);
  if (!args.includes('--no-build'))
    execSync('npx tsc -p tsconfig.build.json', {
      stdio: 'inherit',
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
  const { createBenchDatabase } = await import('./lib/database.js');
  const { startService } = await import('./lib/service.js');
  const { signIn } = await import('./lib/http.js');
  const admin = { email: 'bench-admin@example.com', password: 'bench admin password' };
  const database = await createBenchDatabase();
  let service;
  try {
    service = await startService({
      databaseUrl: database.url,
      env: {
        ADMIN_EMAIL: admin.email,
        ADMIN_PASSWORD: admin.password,
        DEFAULT_MONTHLY_CREDITS: '100000000',
        RATE_LIMIT_PER_MINUTE: '1000000000',
        ORG_RATE_LIMIT_PER_MINUTE: '1000000000',
        LOG_LEVEL: 'warn',
      },
    });
    const { auth } = await signIn(service.baseUrl, admin.email, admin.password);
    const figures = await run({ baseUrl: service.baseUrl, adminAuth: auth, concurrency });
    console.log(JSON.stringify(figures, null, 2));
  } finally {
    await service?.stop();
    await database.drop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
