/**
 * Ingestion through POST /v1/documents/batch/ against the same corpus uploaded one by one through
 * POST /v1/documents/, in the same run (issue 11: target >= 5x faster). The corpus is SciFact's
 * (5,183 abstracts, title + text), read in place from ../shared/data/scifact/ (SCIFACT_DIR overrides).
 * Each way, one request at a time, into a fresh organization of its own; batches are packed up to 100
 * documents and under MAX_BODY_BYTES (1 MB by default). MB are 10^6 bytes of title + text.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const description = 'ingestion: POST /v1/documents/batch/ vs one by one (MB/s, documents/s; target >= 5x)';

const DATA_DIR = process.env.SCIFACT_DIR ?? fileURLToPath(new URL('../../../shared/data/scifact/', import.meta.url));
const BATCH_MAX = 100;
/** Leaves room under MAX_BODY_BYTES' default for the JSON around the documents. */
const BATCH_BYTES = 900_000;
const TARGET = 5;

function readCorpus() {
  return readFileSync(`${DATA_DIR}/corpus.jsonl`, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
    .map((doc) => ({ title: doc.title || doc._id, content: doc.text, metadata: { corpus_id: doc._id } }));
}

/** Consecutive groups of at most BATCH_MAX documents and about BATCH_BYTES of JSON. */
function batches(documents) {
  const groups = [];
  let group = [];
  let bytes = 0;
  for (const document of documents) {
    const size = Buffer.byteLength(JSON.stringify(document)) + 1;
    if (group.length === BATCH_MAX || (group.length > 0 && bytes + size > BATCH_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(document);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

async function timed(work) {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

export async function run(ctx) {
  const { baseUrl } = ctx.service;
  const corpus = readCorpus().filter((doc) => doc.content.trim() !== '');
  const megabytes =
    corpus.reduce((sum, doc) => sum + Buffer.byteLength(doc.title) + Buffer.byteLength(doc.content), 0) / 1e6;
  const keyFor = async () => ({ 'X-API-Key': (await ctx.createKey(await ctx.signUp())).key });
  const post = async (headers, path, body) => {
    const response = await ctx.call(baseUrl, 'POST', path, { body, headers });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };

  const single = await keyFor();
  ctx.log(`one by one: ${corpus.length} documents, ${megabytes.toFixed(2)} MB`);
  const singleSeconds = await timed(async () => {
    for (const document of corpus) await post(single, '/v1/documents/', document);
  });

  const batched = await keyFor();
  const groups = batches(corpus);
  ctx.log(`batched: ${groups.length} requests of up to ${BATCH_MAX}`);
  const batchSeconds = await timed(async () => {
    for (const documents of groups) {
      const { results } = await post(batched, '/v1/documents/batch/', { documents });
      if (results.length !== documents.length) throw new Error('a batch stored fewer documents than it sent');
    }
  });

  const row = (way, requests, seconds) => ({
    way,
    requests,
    documents: corpus.length,
    seconds: seconds.toFixed(1),
    'MB/s': (megabytes / seconds).toPrecision(3),
    'documents/s': Math.round(corpus.length / seconds),
  });
  const speedup = singleSeconds / batchSeconds;
  const rows = [
    row('one by one (POST /v1/documents/)', corpus.length, singleSeconds),
    row('batch (POST /v1/documents/batch/)', groups.length, batchSeconds),
  ];
  ctx.table(
    `Ingestion of SciFact's corpus, one request at a time: batch ${speedup.toFixed(1)}x faster (target >= ${TARGET}x: ${speedup >= TARGET ? 'met' : 'MISSED'})`,
    rows,
  );
  return {
    megabytes: Number(megabytes.toFixed(3)),
    rows,
    speedup: Number(speedup.toFixed(2)),
    target: TARGET,
    met: speedup >= TARGET,
  };
}
