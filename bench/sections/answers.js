/**
 * Issue 21: the answers the service writes without a model, on SQuAD v1.1 (../shared/data/squad-tune/,
 * override with SQUAD_TUNE_DIR). Each paragraph is uploaded as a private document (title = its article),
 * every question goes through POST /v1/query/ (top_k 5), and the answers are scored as SQuAD does
 * (bench/lib/squad.js): the hit of the first sentence, the hit of the whole answer (containment), token
 * F1 and the length in words. On the same sources, in the same run: the extractive answerer as it was
 * before the issue (bench/lib/legacy-answer.js), and the oracle (the best sentence of the paragraph that
 * holds the answer, by F1). Also: how often the answer's paragraph is among the sources, and every
 * citation checked (the cited passage holds the sentence's words). The service's figures also on each half
 * of the articles: the 8 its answerer was fitted on (every other article, from the first) and the 8 held out.
 * BENCH_ANSWERS_QUESTIONS=N asks only every k-th question, about N in all (a quick check);
 * BENCH_ANSWERS_DUMP=file.json writes each question with its sources' passages and both answers (to tune offline).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sentencesOf } from '../../dist/query/answerers/sentences.js';
import { readableBlocks } from '../../dist/query/answerers/readable-passage.js';
import { legacyAnswer } from '../lib/legacy-answer.js';
import { firstSentence, hits, normalizeAnswer, tokenF1, withoutCitations, wordCount } from '../lib/squad.js';
import { pool, readJsonLines } from '../lib/data.js';
import pg from 'pg';
import { tsvectorSql } from '../../dist/retrieval/text-search.js';

export const description =
  'answers without a model on SQuAD v1.1 (first-sentence hit, containment, F1, words): before and after';

const DATA_DIR =
  process.env.SQUAD_TUNE_DIR ?? fileURLToPath(new URL('../../../shared/data/squad-tune/', import.meta.url));
const NOTHING_FOUND = 'I could not find anything in the knowledge base that answers this question.';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const percent = (value) => `${(100 * value).toFixed(1)} %`;

/** The figures of a list of `{answer, golds}`. */
function score(rows) {
  const n = rows.length;
  let first = 0;
  let contained = 0;
  let f1 = 0;
  let nothing = 0;
  for (const { answer, golds } of rows) {
    const plain = withoutCitations(answer);
    if (hits(firstSentence(answer), golds)) first++;
    if (hits(plain, golds)) contained++;
    f1 += tokenF1(plain, golds);
    if (answer === NOTHING_FOUND) nothing++;
  }
  return {
    firstSentenceHit: first / n,
    contains: contained / n,
    tokenF1: f1 / n,
    medianWords: median(rows.map(({ answer }) => wordCount(withoutCitations(answer)))),
    nothingFound: nothing / n,
  };
}

/**
 * Every sentence of an answer ends with a citation, and the cited passage holds the sentence's words in
 * order (its prose, `readableBlocks`, normalized as SQuAD does). Returns the sentences that fail.
 */
function citationFailures(answer, passages) {
  if (answer === NOTHING_FOUND) return [];
  const failures = [];
  const pieces = answer.split(/(?<=\[\d+\])\s+/);
  for (const piece of pieces) {
    const match = /^(.*) \[(\d+)\]$/s.exec(piece);
    const passage = match ? passages[Number(match[2]) - 1] : undefined;
    if (!match || passage === undefined) failures.push(piece);
    else if (!normalizeAnswer(readableBlocks(passage).join(' ')).includes(normalizeAnswer(match[1])))
      failures.push(piece);
  }
  return failures;
}

/**
 * For the dump: each question's terms with the weights the answerer was given (the retriever's `plan`:
 * idf over the corpus's chunks), and what an unseen word weighs, so that an answerer can be replayed offline.
 */
async function withTerms(databaseUrl, asked) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const idf = (chunks, df) => Math.log(1 + (chunks - df + 0.5) / (df + 0.5));
    for (const row of asked) {
      const { rows } = await client.query(
        `SELECT e.lexeme AS term, t.df, s.chunk_count
           FROM unnest(${tsvectorSql('$1')}) e
           JOIN term_stats t ON t.term = e.lexeme AND t.df > 0
           JOIN corpus_stats s ON s.scope_id = t.scope_id AND s.chunk_count > 0`,
        [row.question.question],
      );
      row.terms = rows.map((r) => ({ term: r.term, weight: idf(Number(r.chunk_count), r.df) }));
      const chunks = (await client.query('SELECT max(chunk_count) AS n FROM corpus_stats')).rows[0].n;
      row.unseenWeight = idf(Number(chunks), 0);
    }
  } finally {
    await client.end();
  }
}

export async function run(ctx) {
  const docs = readJsonLines(`${DATA_DIR}/docs.jsonl`);
  const allQuestions = readJsonLines(`${DATA_DIR}/questions.jsonl`);
  const wanted = Number(process.env.BENCH_ANSWERS_QUESTIONS ?? 0);
  const step = wanted > 0 ? Math.max(1, Math.floor(allQuestions.length / wanted)) : 1;
  const questions = allQuestions.filter((_, i) => i % step === 0);
  const database = await ctx.createDatabase();
  const service = await ctx.startService({
    databaseUrl: database.url,
    env: { DEFAULT_MONTHLY_CREDITS: '1000000', RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn' },
  });
  const user = await ctx.signUp(service.baseUrl);
  ctx.log(`answers: uploading ${docs.length} paragraphs`);
  const stored = new Map(); // document id -> stored content
  const documentOf = new Map(); // paragraph _id -> document id
  await pool(docs, 8, async (doc) => {
    const created = await ctx.call(service.baseUrl, 'POST', '/v1/documents/', {
      body: { title: doc.title.replace(/_/g, ' '), content: doc.text },
      headers: user.auth,
    });
    if (created.status !== 201) throw new Error(`upload ${doc._id}: ${created.status} ${JSON.stringify(created.body)}`);
    const read = await ctx.call(service.baseUrl, 'GET', `/v1/documents/${created.body.id}/`, { headers: user.auth });
    stored.set(created.body.id, read.body.content);
    documentOf.set(doc._id, created.body.id);
  });
  const paragraphOf = new Map(docs.map((doc) => [doc._id, doc.text]));

  ctx.log(`answers: asking ${questions.length} questions`);
  const started = performance.now();
  const asked = await pool(questions, 4, async (question) => {
    const response = await ctx.call(service.baseUrl, 'POST', '/v1/query/', {
      body: { query: question.question, top_k: 5 },
      headers: user.auth,
    });
    if (response.status !== 200) throw new Error(`query ${question._id}: ${response.status}`);
    const passages = response.body.sources.map((source) =>
      stored.get(source.document_id).slice(source.start, source.end),
    );
    const snippets = response.body.sources.map((source) => source.snippet);
    return {
      question,
      answer: response.body.answer,
      passages,
      snippets,
      retrieved: response.body.sources.some((source) => source.document_id === documentOf.get(question.doc_id)),
    };
  });
  const seconds = (performance.now() - started) / 1000;

  const golds = (row) => row.question.answers;
  const after = score(asked.map((row) => ({ answer: row.answer, golds: golds(row) })));
  // The split the answerer's second round was fitted on (DEFAULT_EXTRACTIVE): every other article in the
  // file's order, from the first, to tune; the other half held out.
  const articles = [...new Set(docs.map((doc) => doc._id.split('/')[0]))];
  const tuning = new Set(articles.filter((_, i) => i % 2 === 0));
  const half = (inTuning) =>
    score(
      asked
        .filter((row) => tuning.has(row.question.doc_id.split('/')[0]) === inTuning)
        .map((row) => ({ answer: row.answer, golds: golds(row) })),
    );
  const afterTuning = half(true);
  const afterHeldOut = half(false);
  const before = score(
    asked.map((row) => ({
      answer: legacyAnswer(
        row.question.question,
        row.passages.map((content, i) => ({ content, snippet: row.snippets[i] })),
      ),
      golds: golds(row),
    })),
  );
  const oracle = score(
    asked.map((row) => {
      const sentences = sentencesOf(paragraphOf.get(row.question.doc_id)).map((s) => s.text);
      const best = sentences.reduce(
        (top, text) => {
          const f1 = tokenF1(text, golds(row));
          return f1 > top.f1 ? { text, f1 } : top;
        },
        { text: sentences[0] ?? '', f1: -1 },
      );
      return { answer: `${best.text} [1]`, golds: golds(row) };
    }),
  );
  if (process.env.BENCH_ANSWERS_DUMP) {
    await withTerms(database.url, asked);
    writeFileSync(process.env.BENCH_ANSWERS_DUMP, JSON.stringify(asked));
  }
  const failures = asked.flatMap((row) =>
    citationFailures(row.answer, row.passages).map((piece) => ({ id: row.question._id, piece })),
  );
  const retrieved = asked.filter((row) => row.retrieved).length / asked.length;

  const line = (name, figures) => ({
    answerer: name,
    'first sentence hit': percent(figures.firstSentenceHit),
    contains: percent(figures.contains),
    'token F1': percent(figures.tokenF1),
    'median words': figures.medianWords,
    'nothing found': percent(figures.nothingFound),
  });
  ctx.table(
    `answers: SQuAD v1.1 dev, ${docs.length} paragraphs, ${asked.length} questions, top_k 5 (answer's paragraph among the sources: ${percent(retrieved)})`,
    [
      line('before (extractive at 54c984f, same sources)', before),
      line('after (this service)', after),
      line(`  on the ${tuning.size} tuning articles`, afterTuning),
      line(`  on the ${articles.length - tuning.size} held-out articles`, afterHeldOut),
      line('oracle: best sentence of the gold paragraph', oracle),
    ],
  );
  ctx.log(
    `answers: ${failures.length} cited sentences not found in their passage; ${(asked.length / seconds).toFixed(0)} questions/s`,
  );
  for (const failure of failures.slice(0, 5)) ctx.log(`  ${failure.id}: ${failure.piece.slice(0, 160)}`);
  return {
    paragraphs: docs.length,
    questions: asked.length,
    retrievedAt5: retrieved,
    before,
    after,
    afterTuning,
    afterHeldOut,
    oracle,
    citationFailures: failures.length,
    questionsPerSecond: asked.length / seconds,
  };
}
