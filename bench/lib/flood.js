/**
 * Closed-loop load from a worker thread of its own: `connections` requests always in flight, each
 * connection taking the next of `requests` in turn, for `durationSeconds`. The thread keeps an
 * attacker's client work off the main event loop, where a victim's latencies are measured. (autocannon's
 * workers would do the same, but accept string bodies only: uploads are binary.)
 *
 * A request is `{ label, method, path, headers, body }` (body a Buffer or string). Resolves with, per
 * label, `{ statuses: {status: count}, details: {status: first detail seen} }`; a request without an
 * answer counts under the status `network error`. `niceness` > 0 runs the thread at a lower priority.
 */
import { readlinkSync } from 'node:fs';
import http from 'node:http';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export function flood({ baseUrl, connections, durationSeconds, requests, timeoutMs = 60_000, niceness = 0 }) {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { flood: { baseUrl, connections, durationSeconds, requests, timeoutMs, niceness } },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`flood worker exited with ${code} before reporting`)));
  });
}

const DETAIL_BYTES = 2048;

function send(agent, target, spec, timeoutMs) {
  return new Promise((resolve) => {
    const body =
      spec.body === undefined ? undefined : typeof spec.body === 'string' ? Buffer.from(spec.body) : spec.body;
    const request = http.request(
      {
        ...target,
        agent,
        method: spec.method ?? 'GET',
        path: spec.path,
        headers: { ...(body ? { 'content-length': body.length } : {}), ...spec.headers },
        timeout: timeoutMs,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          if (text.length < DETAIL_BYTES) text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode, text }));
        response.on('error', () => resolve({ status: 'network error', text: '' }));
      },
    );
    request.on('error', (error) => resolve({ status: 'network error', text: error.message }));
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.end(body);
  });
}

function detailOf(text) {
  try {
    return JSON.parse(text).detail ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/**
 * Lowers this thread's CPU priority (Linux: a thread id is a process id to setpriority), so that on a
 * machine shared with the service the attacker's own client work yields the CPU, as it would if the
 * attacker ran elsewhere: its requests still arrive as fast as the service answers them.
 */
function lowerPriority(niceness) {
  const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
  setPriority(threadId, niceness);
}

async function run({ baseUrl, connections, durationSeconds, requests, timeoutMs, niceness }) {
  if (niceness > 0) lowerPriority(niceness);
  const { hostname, port } = new URL(baseUrl);
  const target = { host: hostname, port };
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const byLabel = {};
  const deadline = performance.now() + durationSeconds * 1000;
  let next = 0;
  const connection = async () => {
    while (performance.now() < deadline) {
      const spec = requests[next++ % requests.length];
      const { status, text } = await send(agent, target, spec, timeoutMs);
      const entry = (byLabel[spec.label] ??= { statuses: {}, details: {} });
      entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
      if (!(status >= 200 && status < 300)) entry.details[status] ??= detailOf(text);
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  agent.destroy();
  return byLabel;
}

if (!isMainThread && workerData?.flood) parentPort.postMessage(await run(workerData.flood));
