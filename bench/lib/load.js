import http from 'node:http';
import autocannon from 'autocannon';

/**
 * One autocannon run. Returns the figures the sections report; `non2xx` and `errors` are counted so a
 * run that "succeeds" with 401s or 429s is visible.
 */
export async function cannon({
  url,
  connections = 50,
  duration = 10,
  headers = {},
  method = 'GET',
  body,
  overallRate,
  title,
}) {
  const result = await autocannon({
    url,
    connections,
    duration,
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    title,
    ...(overallRate
      ? {
          overallRate,
          // autocannon's own correction assumes an interval of ceil(1/rate) ms, which is not what it
          // schedules; record the latencies as measured.
          ignoreCoordinatedOmission: true,
        }
      : {}),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    totalRequests: result.requests.total,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodeStats,
    duration: result.duration,
    connections,
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function summarize(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  const round = (value) => (value === null ? null : Math.round(value * 100) / 100);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? null),
  };
}

/**
 * How far a ratio of two percentiles (`under`'s over `alone`'s) may move by chance: its `confidence`
 * interval by bootstrap, each sample drawn again with replacement `resamples` times (a fixed seed, so
 * a run's figures repeat). A p99 of 500 latencies is the fifth worst: one run's ratio says little alone.
 */
export function ratioInterval(under, alone, p, { resamples = 2000, confidence = 0.9 } = {}) {
  if (under.length === 0 || alone.length === 0) return null;
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const resampled = (values) => {
    const sample = new Float64Array(values.length);
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)];
    return percentile(sample.sort(), p);
  };
  const ratios = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) ratios[i] = resampled(under) / resampled(alone);
  ratios.sort();
  const tail = ((1 - confidence) / 2) * 100;
  const round = (value) => Math.round(value * 100) / 100;
  return [round(percentile(ratios, tail)), round(percentile(ratios, 100 - tail))];
}

/**
 * An open-loop generator: requests leave at evenly spaced instants (`rate` per second) whatever the
 * previous ones are doing, and latency counts from the instant a request was due, so a stalled
 * server shows up in the figures instead of slowing the generator down (no coordinated omission).
 * `next(i)` returns `{method, path, headers, body, captureBody}` for the i-th request; `onResult`
 * gets `{index, status, latency, spec, elapsedMs, body}` (body parsed when `captureBody` was set).
 */
export async function paced({ baseUrl, rate, durationSeconds, next, maxSockets = 64, onResult }) {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let sent = 0;
  let inFlight = 0;
  const total = Math.round(rate * durationSeconds);
  const start = performance.now();
  const intervalMs = 1000 / rate;

  await new Promise((resolve) => {
    const finishIfDone = () => {
      if (sent === total && inFlight === 0) resolve();
    };
    const fire = (index, dueAt) => {
      const spec = next(index);
      const payload = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
      inFlight++;
      let text = '';
      const done = (status) => {
        const latency = performance.now() - dueAt;
        latencies.push(latency);
        if (status === null) errors++;
        else statuses[status] = (statuses[status] ?? 0) + 1;
        let body;
        if (spec.captureBody && text) {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        onResult?.({ index, status, latency, spec, elapsedMs: performance.now() - start, body });
        inFlight--;
        finishIfDone();
      };
      const request = http.request(
        {
          host: hostname,
          port,
          method: spec.method ?? 'GET',
          path: spec.path,
          agent,
          headers: {
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
            ...spec.headers,
          },
          timeout: 30_000,
        },
        (response) => {
          if (spec.captureBody) response.setEncoding('utf8');
          response.on('data', (chunk) => {
            if (spec.captureBody) text += chunk;
          });
          response.on('end', () => done(response.statusCode));
          response.on('error', () => done(null));
        },
      );
      request.on('error', () => done(null));
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.end(payload);
    };
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor((now - start) / intervalMs) + 1);
      while (sent < due) {
        fire(sent, start + sent * intervalMs);
        sent++;
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
      else finishIfDone();
    };
    tick();
  });
  agent.destroy();
  return { rate, durationSeconds, statuses, errors, latencyMs: summarize(latencies) };
}

/**
 * `cannon()` in a child process, at the scheduling priority `niceness` (0-19, `nice`): on a machine with
 * few cores the load generator then yields the cores to the service and to the client being measured,
 * so that what the client sees is the service's doing, not the generator's. Same options and figures.
 */
export async function cannonApart(options, { niceness = 10 } = {}) {
  const { spawn } = await import('node:child_process');
  const script = new URL('./cannon-child.js', import.meta.url).pathname;
  const child = spawn('nice', ['-n', String(niceness), process.execPath, script, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  return JSON.parse(output);
}
