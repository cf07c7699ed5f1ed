/**
 * Abuse (issue 13, "Figures"): for ABUSE_SECONDS (default 30), all at once against one service with the
 * production limits:
 *  - A uploads the worst files within MAX_UPLOAD_BYTES, as many at once as MAX_UPLOADS_IN_FLIGHT allows:
 *    10 MB of unclosed `<b>`, 10 MB of tiny `<i>` siblings, a PDF inflating to 300 MB, a PDF of 20 MB of
 *    text operators, a PDF of 100,000 pages;
 *  - B floods, from 64 connections and 8 addresses, sign-in with wrong passwords (the victim's e-mail
 *    and unknown ones) and `POST /v1/query/` with forged, well-formed `svc_` keys;
 *  - C, the victim, sends `GET /health/` (20/s) and key-authenticated `POST /v1/query/` (5/s) at a
 *    steady pace, open loop (latency from the instant a request was due).
 * Targets: C's /health/ p99 < 50 ms, every query of C a 200, the service and its extraction workers
 * under the container's memory limit (512 MiB, deploy/kubernetes/deployment.yaml), no 5xx.
 * A and B run in worker threads (bench/lib/flood.js), so their client work never delays C's timings.
 * Each client has its own address through X-Forwarded-For (TRUST_PROXY as behind the ingress), as the
 * per-address limits would otherwise lump the victim in with the attackers. Beside the victim's figures:
 * the service's longest event-loop stall (its /metrics, read before and after) and its CPU, including how
 * long its main thread waited for a CPU: on a shared machine that wait may be most of the run, and then
 * the victim's latencies measure the machine more than the service. The memory figure is
 * the service's RSS plus what each worker does not share with it (bench/lib/proc.js familyMemoryMb):
 * the pages of the node binary and libraries once, as a container's cgroup charges them; the plain
 * sum of RSS, which counts them once per process, is printed beside it.
 * ABUSE_ATTACKS (default `uploads,flood`): one attacker alone, to see which one hurts, or `none` (a baseline).
 * ABUSE_ATTACKER_NICENESS (default 0): run the attackers' client threads at this niceness, so their own
 * CPU yields to the service as if they ran on other machines (they still send as fast as it answers).
 */
import { randomBytes } from 'node:crypto';
import { flood } from '../lib/flood.js';
import { summarize } from '../lib/load.js';
import { cpuSeconds, mainThreadSchedule } from '../lib/proc.js';
import { manyPagesPdf, multipartFile, pdfBomb, tinyElementsHtml, unclosedTagsHtml } from '../lib/hostile-files.js';

export const description =
  'uploads of hostile files and a sign-in / forged-key flood while a victim queries: its /health/ p99, RSS, 5xx';
export const explicitOnly = true;

const CONTAINER_LIMIT_MB = 512;
const HEALTH_P99_TARGET_MS = 50;
const UPLOADER = '198.51.100.7';
const FLOODER_ADDRESSES = Array.from({ length: 8 }, (_, i) => `203.0.113.${i + 1}`);
const VICTIM = '192.0.2.10';
const UPLOADS_AT_ONCE = 4; // MAX_UPLOADS_IN_FLIGHT's default: every place taken, none refused
const FLOOD_CONNECTIONS = 64;
const HEALTH_RATE = 20;
const WINDOW_SECONDS = 5;
const QUERY_RATE = 5;

async function hostileUploads() {
  const files = [
    ['10 MB of unclosed <b>', 'deep.html', unclosedTagsHtml(3_300_000)],
    ['10 MB of tiny <i> siblings', 'flat.html', tinyElementsHtml(1_250_000)],
    ['PDF inflating to 300 MB', 'bomb.pdf', await pdfBomb(300 * 1024 * 1024)],
    [
      'PDF of 20 MB of text operators',
      'chatty.pdf',
      await pdfBomb(20 * 1024 * 1024, '(Boom boom) Tj T*\n', 'BT /F1 12 Tf 14 TL\n'),
    ],
    ['PDF of 100,000 pages', 'pages.pdf', manyPagesPdf(100_000)],
  ];
  return files.map(([label, name, content]) => ({ label, name, ...multipartFile(name, content) }));
}

/** B's requests, taken in turn: wrong passwords for the victim and for unknown e-mails, forged keys. */
async function floodRequests(victimEmail) {
  // The service's own generator: random keys with a valid checksum, in no database.
  const { generateApiKey } = await import('../../dist/api-keys/key-format.js');
  return Array.from({ length: 2000 }, (_, i) => {
    // Each address sends both kinds (i % 2) in turn: with i % 8, half the addresses would send only one.
    const address = { 'X-Forwarded-For': FLOODER_ADDRESSES[Math.floor(i / 2) % FLOODER_ADDRESSES.length] };
    if (i % 2 === 1) {
      return {
        label: 'B forged svc_ key',
        method: 'POST',
        path: '/v1/query/',
        headers: { ...address, 'X-API-Key': generateApiKey().key, 'content-type': 'application/json' },
        body: '{"query":"anything"}',
      };
    }
    const email = i % 4 === 0 ? victimEmail : `nobody${i}-${randomBytes(4).toString('hex')}@example.com`;
    return {
      label: 'B sign-in, wrong password',
      method: 'POST',
      path: '/auth/jwt/create/',
      headers: { ...address, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: `guess ${i}` }),
    };
  });
}

/** The service's longest event-loop delay since the previous read, in ms (prom-client resets it at each scrape). */
async function eventLoopMaxMs(ctx, baseUrl) {
  const { body } = await ctx.call(baseUrl, 'GET', '/metrics');
  const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(body);
  return match ? Math.round(Number(match[1]) * 1000) : null;
}

const statusText = (statuses) =>
  Object.entries(statuses)
    .map(([status, n]) => `${status}:${n}`)
    .join(' ');
const fiveXxOf = (statuses) =>
  Object.entries(statuses).reduce((sum, [status, n]) => sum + (Number(status) >= 500 ? n : 0), 0);

export async function run(ctx) {
  const seconds = ctx.seconds('ABUSE_SECONDS', 30);
  const attacks = (process.env.ABUSE_ATTACKS ?? 'uploads,flood').split(',');
  const attackerNiceness = ctx.seconds('ABUSE_ATTACKER_NICENESS', 0);
  if (seconds < 30)
    ctx.log(`ABUSE_SECONDS=${seconds}: shorter than 30 s checks that the code works; do not publish its figures`);
  const database = await ctx.createDatabase();
  const service = await ctx.startService({
    databaseUrl: database.url,
    env: {
      // The production limits: run.js lifts them for the other sections; undefined leaves the service's defaults.
      RATE_LIMIT_PER_MINUTE: undefined,
      ORG_RATE_LIMIT_PER_MINUTE: undefined,
      KEY_RATE_LIMIT_MAX_PER_MINUTE: undefined,
      SIGNUP_LIMIT_PER_HOUR: undefined,
      SIGNIN_LIMIT_PER_MINUTE: undefined,
      TOKEN_LIMIT_PER_MINUTE: undefined,
      TRUST_PROXY: '127.0.0.1',
      // Counters of this run only: the attackers' addresses are the same in every run, and Redis keeps them.
      REDIS_KEY_PREFIX: `kqs-abuse-${randomBytes(4).toString('hex')}:`,
      // So that the victim's queries never run out of credits, whatever ABUSE_SECONDS.
      DEFAULT_MONTHLY_CREDITS: '100000000',
    },
  });
  const { baseUrl } = service;

  const victim = await ctx.signUp(baseUrl);
  const victimKey = (await ctx.createKey(victim, 'victim', baseUrl)).key;
  const document = {
    title: 'Runbook',
    content: 'Restart the ingest worker when the queue backs up. Failover moves traffic to the replica.',
  };
  const created = await ctx.call(baseUrl, 'POST', '/v1/documents/', { body: document, headers: victim.auth });
  if (created.status !== 201) throw new Error(`the victim's document answered ${created.status}`);
  const uploader = await ctx.signUp(baseUrl);
  ctx.log('abuse: building the hostile files');
  const uploads = (await hostileUploads()).map(({ label, body, contentType }) => ({
    label: `A ${label}`,
    method: 'POST',
    path: '/v1/documents/',
    headers: { ...uploader.auth, 'X-Forwarded-For': UPLOADER, 'content-type': contentType },
    body,
  }));

  const floodList = await floodRequests(victim.email);
  // C's /health/ latencies by window: when in the run the victim suffered.
  const healthWindows = [];
  const onHealth = ({ latency, elapsedMs }) =>
    (healthWindows[Math.floor(elapsedMs / (WINDOW_SECONDS * 1000))] ??= []).push(latency);

  await eventLoopMaxMs(ctx, baseUrl);
  const cpuAtStart = {
    process: cpuSeconds(service.pid),
    mainThread: mainThreadSchedule(service.pid),
    at: performance.now(),
  };
  const rssAtStart = service.familyRssMb();
  const memoryAtStart = service.familyMemoryMb();
  let peakRssMb = rssAtStart;
  let peakMemoryMb = memoryAtStart;
  let peakServiceMb = service.rssMb();
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, service.familyRssMb());
    peakMemoryMb = Math.max(peakMemoryMb, service.familyMemoryMb());
    peakServiceMb = Math.max(peakServiceMb, service.rssMb());
  }, 100);
  ctx.log(`abuse: ${seconds} s; service and workers at ${memoryAtStart} MiB`);
  let results;
  try {
    const victimHeaders = { 'X-Forwarded-For': VICTIM };
    results = await Promise.all([
      attacks.includes('uploads')
        ? flood({
            baseUrl,
            connections: UPLOADS_AT_ONCE,
            durationSeconds: seconds,
            requests: uploads,
            timeoutMs: 120_000,
            niceness: attackerNiceness,
          })
        : {},
      attacks.includes('flood')
        ? flood({
            baseUrl,
            connections: FLOOD_CONNECTIONS,
            durationSeconds: seconds,
            requests: floodList,
            niceness: attackerNiceness,
          })
        : {},
      ctx.paced({
        baseUrl,
        rate: HEALTH_RATE,
        durationSeconds: seconds,
        next: () => ({ path: '/health/', headers: victimHeaders }),
        onResult: onHealth,
      }),
      ctx.paced({
        baseUrl,
        rate: QUERY_RATE,
        durationSeconds: seconds,
        next: () => ({
          method: 'POST',
          path: '/v1/query/',
          headers: { ...victimHeaders, 'X-API-Key': victimKey },
          body: { query: 'How do I restart the ingest worker?' },
        }),
      }),
    ]);
  } finally {
    clearInterval(sampler);
  }
  const [uploaded, flooded, health, queries] = results;
  const wallSeconds = (performance.now() - cpuAtStart.at) / 1000;
  const tenths = (value) => Math.round(value * 10) / 10;
  const mainThread = mainThreadSchedule(service.pid);
  const cpu = {
    wallSeconds: tenths(wallSeconds),
    process: tenths(cpuSeconds(service.pid) - cpuAtStart.process),
    mainThreadRan: tenths(mainThread.runSeconds - cpuAtStart.mainThread.runSeconds),
    mainThreadWaitedForCpu: tenths(mainThread.waitSeconds - cpuAtStart.mainThread.waitSeconds),
  };
  const loopMaxMs = await eventLoopMaxMs(ctx, baseUrl);
  const alive = (await ctx.call(baseUrl, 'GET', '/health/ready/')).status;

  const attackers = { ...uploaded, ...flooded };
  const fiveXx =
    fiveXxOf(health.statuses) +
    fiveXxOf(queries.statuses) +
    Object.values(attackers).reduce((sum, { statuses }) => sum + fiveXxOf(statuses), 0);
  const queriesAll200 = queries.errors === 0 && Object.keys(queries.statuses).every((status) => status === '200');
  const healthMet = health.errors === 0 && health.latencyMs.p99 < HEALTH_P99_TARGET_MS;
  const memoryMet = peakMemoryMb < CONTAINER_LIMIT_MB;
  const verdict = (met) => (met ? 'met' : 'MISSED');

  ctx.table(
    `abuse: the victim (C) under ${attacks.join(' + ')}, ${seconds} s, attackers at niceness ${attackerNiceness}`,
    [
      {
        requests: `C GET /health/ (${HEALTH_RATE}/s)`,
        answers: statusText(health.statuses) + (health.errors ? ` errors:${health.errors}` : ''),
        'p50 ms': health.latencyMs.p50,
        'p99 ms': health.latencyMs.p99,
        'max ms': health.latencyMs.max,
        target: `p99 < ${HEALTH_P99_TARGET_MS} ms`,
        verdict: verdict(healthMet),
      },
      {
        requests: `C POST /v1/query/ key (${QUERY_RATE}/s)`,
        answers: statusText(queries.statuses) + (queries.errors ? ` errors:${queries.errors}` : ''),
        'p50 ms': queries.latencyMs.p50,
        'p99 ms': queries.latencyMs.p99,
        'max ms': queries.latencyMs.max,
        target: 'all 200',
        verdict: verdict(queriesAll200),
      },
    ],
  );
  const windows = healthWindows.map((latencies, i) => ({
    window: `${i * WINDOW_SECONDS}-${(i + 1) * WINDOW_SECONDS} s`,
    ...summarize(latencies ?? []),
  }));
  ctx.table(`abuse: C's GET /health/ by ${WINDOW_SECONDS} s window (ms, by the instant each answer came)`, windows);
  ctx.table(
    `abuse: the attackers (A: ${UPLOADS_AT_ONCE} uploads at once; B: ${FLOOD_CONNECTIONS} connections from ${FLOODER_ADDRESSES.length} addresses)`,
    Object.entries(attackers).map(([requests, { statuses, details }]) => ({
      requests,
      answers: statusText(statuses),
      'first detail of each refusal': Object.entries(details)
        .map(([status, detail]) => `${status}: ${String(detail).slice(0, 110)}`)
        .join(' | '),
    })),
  );
  ctx.table('abuse: memory and errors', [
    {
      figure: 'peak memory, service and extraction workers (shared pages once)',
      value: `${peakMemoryMb} MiB`,
      target: `< ${CONTAINER_LIMIT_MB} MiB`,
      verdict: verdict(memoryMet),
    },
    {
      figure: 'peak RSS sum, service and extraction workers (shared pages per process)',
      value: `${peakRssMb} MiB`,
      target: '',
      verdict: '',
    },
    { figure: 'peak RSS, service alone', value: `${peakServiceMb} MB`, target: '', verdict: '' },
    {
      figure: 'service CPU: whole process',
      value: `${cpu.process} s in ${cpu.wallSeconds} s`,
      target: '',
      verdict: '',
    },
    {
      figure: "service's main thread: ran / waited for a CPU",
      value: `${cpu.mainThreadRan} s / ${cpu.mainThreadWaitedForCpu} s`,
      target: '',
      verdict: '',
    },
    { figure: "longest stall of the service's event loop", value: `${loopMaxMs} ms`, target: '', verdict: '' },
    { figure: '5xx answers, all clients', value: fiveXx, target: '0', verdict: verdict(fiveXx === 0) },
    { figure: '/health/ready/ afterwards', value: alive, target: '200', verdict: verdict(alive === 200) },
  ]);
  await service.stop();
  return {
    seconds,
    attacks,
    attackerNiceness,
    victim: { health, healthWindows: windows, queries },
    attackers,
    memoryMb: {
      start: memoryAtStart,
      peak: peakMemoryMb,
      rssSumStart: rssAtStart,
      rssSumPeak: peakRssMb,
      servicePeak: peakServiceMb,
      containerLimit: CONTAINER_LIMIT_MB,
    },
    cpuSeconds: cpu,
    eventLoopMaxMs: loopMaxMs,
    fiveXx,
    readyAfterwards: alive,
    targetsMet: healthMet && queriesAll200 && memoryMet && fiveXx === 0 && alive === 200,
  };
}
